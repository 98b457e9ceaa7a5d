// Adversarial: write-target evasion of the lock hook. Agent A holds a lock on dir/f.txt; agent
// B asks the hub's POST /hook (with its own token, as the hook script does) about many tool
// calls that would write that file or a directory holding it. Every one must be denied. KNOWN
// lists forms that get through (printed, tallied as findings): none today. The test fails on
// any other form that gets through, and says when a KNOWN form starts to hold.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startAdvHub, ok, type AdvHub, type Agent } from './harness.js';
import { Checks, printTally } from './tally.js';
import { sql } from 'kysely';
import { row } from '../helpers/state.js';

const KNOWN: string[] = [];

describe('adversarial: lock hook write-target evasion', { timeout: 120_000 }, () => {
  let a: AdvHub;
  let A: Agent;
  let B: Agent;
  let root: string;

  before(async () => {
    a = await startAdvHub();
    root = realpathSync(a.h.project);
    mkdirSync(join(root, 'dir', 'sub'), { recursive: true });
    mkdirSync(join(root, 'x'), { recursive: true });
    writeFileSync(join(root, 'dir', 'f.txt'), 'locked\n');
    writeFileSync(join(root, 'other.txt'), 'other\n');
    writeFileSync(join(root, 'x', 'f.txt'), 'same name\n');
    symlinkSync(join(root, 'dir', 'f.txt'), join(root, 'link-to-f'));
    symlinkSync(join(root, 'dir'), join(root, 'link-to-dir'));
    A = await a.agent('A holder');
    B = await a.agent('B evader');
    await ok(A.client, 'lock_files', { files: ['dir/f.txt'] });
  });
  after(async () => {
    await a?.stop();
    printTally('hook');
  });

  const hook = async (tool_name: string, tool_input: Record<string, unknown>, cwd = root): Promise<{ decision?: string; reason?: string }> => {
    const r = await fetch(a.url.replace(/\/mcp$/, '/hook'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${B.token}` },
      body: JSON.stringify({ hook_event_name: 'PreToolUse', tool_name, tool_input, cwd }),
    });
    assert.equal(r.status, 200);
    return (await r.json()) as { decision?: string; reason?: string };
  };

  test('every Bash form that writes the locked file or its directory is denied', async () => {
    const abs = (p: string): string => join(root, p);
    const forms: [string, string, string?][] = [
      ['redirect >', 'echo x > dir/f.txt'],
      ['redirect >>', 'echo x >> dir/f.txt'],
      ['redirect 1>', 'echo x 1> dir/f.txt'],
      ['redirect &>', 'echo x &> dir/f.txt'],
      ['redirect >|', 'echo x >| dir/f.txt'],
      ['redirect 2>', 'ls nope 2> dir/f.txt'],
      ['redirect no space', 'echo x >dir/f.txt'],
      ['heredoc into the file', 'cat <<EOF > dir/f.txt\nx\nEOF'],
      ['absolute path', `echo x > ${abs('dir/f.txt')}`],
      ['dot-dot path', 'echo x > dir/sub/../f.txt'],
      ['./ and // path', 'echo x > ./dir//f.txt'],
      ['quoted path', 'echo x > "dir/f.txt"'],
      ['partly quoted path', "echo x > 'dir'/f.txt"],
      ['backslash-escaped path', 'echo x > dir/f\\.txt'],
      ['tee', 'echo x | tee dir/f.txt'],
      ['tee -a', 'echo x | tee -a other.txt dir/f.txt'],
      ['sed -i', 'sed -i s/a/b/ dir/f.txt'],
      ['sed -i.bak', 'sed -i.bak -e s/a/b/ dir/f.txt'],
      ['perl -pi', 'perl -pi -e s/a/b/ dir/f.txt'],
      ['cp onto', 'cp other.txt dir/f.txt'],
      ['cp a same-named file into the directory', 'cp x/f.txt dir/'],
      ['cp -t into the directory', 'cp -t dir x/f.txt'],
      ['mv a same-named file into the directory', 'mv x/f.txt dir'],
      ['mv onto', 'mv other.txt dir/f.txt'],
      ['mv away', 'mv dir/f.txt elsewhere.txt'],
      ['rm', 'rm dir/f.txt'],
      ['rm -f ./', 'rm -f ./dir/f.txt'],
      ['unlink', 'unlink dir/f.txt'],
      ['truncate', 'truncate -s 0 dir/f.txt'],
      ['dd of=', 'dd if=/dev/zero of=dir/f.txt count=1'],
      ['ln -sf onto', 'ln -sf /etc/passwd dir/f.txt'],
      ['install onto', 'install other.txt dir/f.txt'],
      ['git checkout --', 'git checkout -- dir/f.txt'],
      ['git restore', 'git restore dir/f.txt'],
      ['cd dir && rm f', 'cd dir && rm f.txt'],
      ['cd dir; redirect', 'cd dir; echo x > f.txt'],
      ['subshell cd', '(cd dir && rm f.txt)'],
      ['subshell redirect', '(echo x > dir/f.txt)'],
      ['brace group', '{ echo x > dir/f.txt; }'],
      ['$(…)', 'echo $(rm dir/f.txt)'],
      ['backticks', 'echo `rm dir/f.txt`'],
      ['<(…)', 'cat <(echo x > dir/f.txt)'],
      ['bash -c', 'bash -c "rm dir/f.txt"'],
      ['sh -c', "sh -c 'echo x > dir/f.txt'"],
      ['eval', 'eval "rm dir/f.txt"'],
      ['xargs rm', 'echo dir/f.txt | xargs rm'],
      ['find -delete', 'find dir -name f.txt -delete'],
      ['find -exec rm', 'find dir -name f.txt -exec rm {} \\;'],
      ['glob', 'rm dir/f.tx?'],
      ['brace expansion', 'rm dir/{f,g}.txt'],
      ['variable', 'F=dir/f.txt; rm "$F"'],
      ['via symlink to the file', 'echo x > link-to-f'],
      ['via symlink to the directory', 'rm link-to-dir/f.txt'],
      ['dot-dot after a symlink', 'echo x > link-to-dir/../dir/f.txt'],
      ['cwd inside dir, relative', 'rm f.txt', 'dir'],
      ['cwd below dir, ../', 'echo x > ../f.txt', 'dir/sub'],
      ['rm -rf dir', 'rm -rf dir'],
      ['rm -r dir/', 'rm -r dir/'],
      ['rm -rf .', 'rm -rf .'],
      ['rm -rf *', 'rm -rf *'],
      ['mv dir x', 'mv dir moved'],
      ['git checkout .', 'git checkout .'],
      ['git checkout -- dir', 'git checkout -- dir'],
      ['git reset --hard', 'git reset --hard'],
      ['git stash', 'git stash'],
      ['git clean -fdx', 'git clean -fdx'],
      ['cp -r x/. dir', 'cp -r x/. dir'],
      ['rsync --delete into dir', 'rsync -a --delete x/ dir/'],
      ['tar x into dir', 'tar -xf a.tar -C dir'],
      ['python open(w)', `python3 -c "open('dir/f.txt','w')"`],
      ['node writeFileSync', `node -e "require('fs').writeFileSync('dir/f.txt','x')"`],
    ];
    const c = new Checks('hook evasion', KNOWN);
    for (const [label, command, cwd] of forms) {
      const v = await hook('Bash', { command }, cwd ? join(root, cwd) : root);
      c.check(label, v.decision === 'deny', `\`${command}\` → ${v.decision}`);
    }
    const writes: [string, string][] = [
      ['Write absolute', abs('dir/f.txt')],
      ['Write relative', 'dir/f.txt'],
      ['Write dot-dot', 'dir/sub/../f.txt'],
      ['Write via symlink to the file', 'link-to-f'],
      ['Write via symlink to the directory', 'link-to-dir/f.txt'],
    ];
    for (const [label, file_path] of writes) {
      const v = await hook('Write', { file_path, content: 'x' });
      c.check(label, v.decision === 'deny', `${JSON.stringify(file_path)} → ${v.decision}`);
    }
    const held = await row(a.h.hub, sql<{ holder: string }>`SELECT holder FROM locks WHERE path = ${join(root, 'dir', 'f.txt')}`);
    assert.equal(held?.holder, A.id, 'A lost its lock');
    c.assertOnlyKnown((u) => assert.deepEqual(u, [], `forms that got past the hook (not in KNOWN): ${u.join('; ')}`));
  });
});
