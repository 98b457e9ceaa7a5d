// Adversarial: locks below the hook. A confined child (real bubblewrap, the real plan) is already
// running when another agent's lock is applied to its namespace by the real helper
// (hooks/overseer-lockmount.py); then every way of writing that file runs inside it — most of
// them forms no hook can read — and the file must come out unchanged. Afterwards the lock ends and
// a plain write must work again (the mount is gone, not stuck). Figures go to the shared tally.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { bwrapArgs } from '../../src/confine/plan.js';
import { planFor } from '../../src/confine/jail.js';
import { probeBwrap } from '../../src/confine/launcher.js';
import { innerPid, pythonHelper } from '../../src/confine/lockMounts.js';
import { which } from '../../src/launch/which.js';
import { makeTempDir } from '../helpers/claude.js';
import { initRepo } from '../helpers/git.js';
import { finding, printTally, refused } from './tally.js';

const CAT = 'locks below the hook: writes to a held file from inside a running child';
const ORIGINAL = 'held by agent A\n';

describe('adversarial: locks below the hook', { timeout: 120_000 }, () => {
  const probe = probeBwrap();
  let base: string;
  let project: string;
  let held: string;
  let shell: ChildProcessWithoutNullStreams;
  let out = '';
  let exec: (cmd: string) => Promise<string>;

  before(async () => {
    if (!probe.ok) throw new Error(`needs bubblewrap: ${probe.reason}`);
    base = realpathSync(await makeTempDir('ovs-lockjail'));
    project = join(base, 'project');
    mkdirSync(project);
    await initRepo(project);
    held = join(project, 'held.txt');
    writeFileSync(held, ORIGINAL);
    execFileSync('git', ['-C', project, 'add', 'held.txt']);
    execFileSync('git', ['-C', project, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'held']);
    writeFileSync(join(project, 'other.txt'), 'other\n');
    const state = join(base, 'state');
    mkdirSync(state);
    const plan = planFor(project, { HOME: join(base, 'home') }, { stateDir: state, projectDir: project, packageRoot: realpathSync(join(import.meta.dirname, '..', '..')) });
    // A long-lived shell in the jail: each line is one command, answered by a marker line.
    shell = spawn(probe.ok ? probe.bwrap : 'bwrap', [...bwrapArgs(plan), '--', 'sh', '-c', 'while IFS= read -r cmd; do (eval "$cmd") >/dev/null 2>&1; echo "::done $?"; done'], { cwd: project, env: { PATH: process.env.PATH, HOME: join(base, 'home') } });
    shell.stdout.on('data', (c: Buffer) => { out += c.toString(); });
    exec = (cmd) => new Promise((resolve, reject) => {
      const start = out.length;
      const t = setTimeout(() => reject(new Error(`no answer to ${cmd}`)), 20_000);
      const check = (): void => {
        const m = /::done (\d+)\n/.exec(out.slice(start));
        if (m) { clearTimeout(t); shell.stdout.off('data', check); resolve(m[1]!); }
      };
      shell.stdout.on('data', check);
      shell.stdin.write(`${cmd}\n`);
    });
    await exec('true'); // the namespace exists
    const python = which('python3');
    if (!python) throw new Error('needs python3');
    const ns = innerPid(shell.pid!);
    assert.ok(ns, 'the process inside the jail');
    const r = await pythonHelper(python, join(import.meta.dirname, '..', '..', 'hooks', 'overseer-lockmount.py'))([String(ns), 'ro', held]);
    assert.ok(r.ok, r.stderr);
  });

  after(async () => {
    printTally('lock-mounts');
    shell?.kill('SIGKILL');
    if (base) await rm(base, { recursive: true, force: true });
  });

  test('no form of write changes the held file', async () => {
    const forms = [
      `echo x > held.txt`,
      `echo x >> held.txt`,
      `printf x | tee held.txt`,
      `node -e "require('fs').writeFileSync('held.txt', 'x')"`,
      `node -e "require('fs').appendFileSync('held.txt', 'x')"`,
      `python3 -c "open('held.txt','w').write('x')"`,
      `printf 'require("fs").writeFileSync("held.txt","x")' > w.js && node w.js`,
      `printf 'echo x > held.txt' > w.sh && sh w.sh`,
      `sed -i s/held/x/ held.txt`,
      `perl -pi -e s/held/x/ held.txt`,
      `truncate -s 0 held.txt`,
      `dd if=/dev/zero of=held.txt bs=1 count=4 conv=notrunc`,
      `cp other.txt held.txt`,
      `cat other.txt > held.txt`,
      `mv other.txt held.txt`,
      `rm -f held.txt`,
      `ln -sf other.txt held.txt`,
      `ln -f other.txt held.txt`,
      `git checkout -- held.txt && echo x > held.txt`,
      `git stash -u; git rm -q held.txt`,
      `find . -name held.txt -delete`,
      `sh -c 'exec 3>held.txt; echo x >&3'`,
      `node -e "const fs=require('fs'); fs.renameSync('other.txt','held.txt')"`,
      `python3 -c "import os; os.replace('other.txt','held.txt')"`,
      `python3 -c "import os; os.chmod('held.txt', 0o777); open('held.txt','a').write('x')"`,
      `umount held.txt; echo x > held.txt`,
      `mount -o remount,rw held.txt; echo x > held.txt`,
    ];
    const got: string[] = [];
    for (const f of forms) {
      await exec(f);
      let now: string | undefined;
      try {
        now = readFileSync(held, 'utf8');
      } catch {
        now = undefined;
      }
      if (now !== ORIGINAL) {
        finding(CAT, `changed the held file with: ${f}`);
        got.push(f);
        writeFileSync(held, ORIGINAL);
      } else refused(CAT);
      writeFileSync(join(project, 'other.txt'), 'other\n');
    }
    assert.deepEqual(got, [], 'writes that got through');
  });

  test('after the lock ends the file is writable again from the same running child', async () => {
    const ns = innerPid(shell.pid!)!;
    const r = await pythonHelper(which('python3')!, join(import.meta.dirname, '..', '..', 'hooks', 'overseer-lockmount.py'))([String(ns), 'rw', held]);
    assert.ok(r.ok, r.stderr);
    assert.equal(await exec('echo free > held.txt'), '0');
    assert.equal(readFileSync(held, 'utf8'), 'free\n');
  });
});
