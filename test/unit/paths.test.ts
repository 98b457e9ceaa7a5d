// resolveLockPath / resolveLockPaths / isInside against real temp directories with real
// symlinks: normalisation, confinement to the work tree, symlinks in and out, bad input.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isInside } from '../../src/domain/paths.js';
import { resolveLockPath, resolveLockPaths, realTarget, type RejectedPath } from '../../src/services/realPaths.js';

let tmp: string; // realpath of a fresh temp dir
let root: string; // <tmp>/work, the work tree
let outside: string; // <tmp>/outside

before(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'overseer-paths-')));
  root = path.join(tmp, 'work');
  outside = path.join(tmp, 'outside');
  fs.mkdirSync(path.join(root, 'src', 'lib'), { recursive: true });
  fs.mkdirSync(outside);
  fs.writeFileSync(path.join(root, 'src', 'a.ts'), 'a');
  fs.writeFileSync(path.join(outside, 'secret.txt'), 's');
  fs.symlinkSync(path.join(root, 'src'), path.join(root, 'srclink'));
  fs.symlinkSync(outside, path.join(root, 'out'));
  fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'secret-link'));
  fs.symlinkSync(path.join(tmp, 'nowhere', 'x'), path.join(root, 'dangling'));
  fs.symlinkSync(root, path.join(tmp, 'worklink'));
});
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

function ok(p: string, base = root, r = root): string {
  const res = resolveLockPath(p, base, r);
  assert.ok(res.ok, `expected ${p} to resolve, got ${JSON.stringify(res)}`);
  return res.path;
}
function rejected(p: string, base = root, r = root): RejectedPath {
  const res = resolveLockPath(p, base, r);
  assert.ok(!res.ok, `expected ${JSON.stringify(p).slice(0, 80)} to be rejected, got ${JSON.stringify(res)}`);
  assert.equal(res.input, p);
  return res;
}

describe('resolveLockPath: normalisation', () => {
  test('relative to base', () => assert.equal(ok('src/a.ts'), path.join(root, 'src/a.ts')));
  test('relative to a nested base', () => assert.equal(ok('a.ts', path.join(root, 'src')), path.join(root, 'src/a.ts')));
  test('absolute', () => assert.equal(ok(path.join(root, 'src/a.ts')), path.join(root, 'src/a.ts')));
  test('./ and inner .. collapse', () => assert.equal(ok('./src/lib/../a.ts'), path.join(root, 'src/a.ts')));
  test('trailing slashes are dropped', () => assert.equal(ok('src/lib///'), path.join(root, 'src/lib')));
  test('not-yet-existing nested file', () => assert.equal(ok('src/new/deeper/file.ts'), path.join(root, 'src/new/deeper/file.ts')));
  test('root itself only with allowRoot', () => {
    assert.match(rejected('.').reason, /work tree root/);
    const r = resolveLockPath('.', root, root, { allowRoot: true });
    assert.deepEqual(r, { ok: true, path: root });
  });
});

describe('resolveLockPath: symlinks', () => {
  test('a symlink to a dir inside root resolves to the real dir', () => {
    assert.equal(ok('srclink/a.ts'), path.join(root, 'src/a.ts'));
  });
  test('a not-yet-existing file under a symlinked dir resolves through the link', () => {
    assert.equal(ok('srclink/new/file.ts'), path.join(root, 'src/new/file.ts'));
  });
  test('a symlink pointing outside root is rejected, naming root', () => {
    const r = rejected('out/secret.txt');
    assert.match(r.reason, new RegExp(`outside the work tree ${root}`));
    assert.match(r.reason, /outside/);
    rejected('out/not-yet.txt');
    rejected('secret-link');
  });
  test('a dangling symlink is rejected', () => {
    assert.match(rejected('dangling').reason, /symlink whose target does not exist/);
  });
  test('symlinked root: root given as realpath, path given through the link', () => {
    assert.equal(ok(path.join(tmp, 'worklink', 'src', 'a.ts')), path.join(root, 'src/a.ts'));
    assert.equal(ok('src/b.ts', path.join(tmp, 'worklink')), path.join(root, 'src/b.ts'));
  });
  test('root given through a symlink is realpath-ed too', () => {
    assert.equal(ok('src/a.ts', root, path.join(tmp, 'worklink')), path.join(root, 'src/a.ts'));
  });
});

describe('resolveLockPath: rejections', () => {
  test('.. escapes', () => {
    assert.match(rejected('../x').reason, /outside the work tree/);
    assert.match(rejected('a/../../x').reason, /outside the work tree/);
    rejected('src/../../outside/secret.txt');
    rejected(path.join(outside, 'secret.txt'));
    rejected('/etc/passwd');
  });
  test('empty string', () => assert.match(rejected('').reason, /empty/));
  test('NUL byte', () => assert.match(rejected('src/a\u0000.ts').reason, /NUL/));
  test('control characters', () => {
    assert.match(rejected('src/a\n.ts').reason, /control character U\+000A/);
    assert.match(rejected('src/\u001b[31m.ts').reason, /control character/);
    assert.match(rejected('src/a\u007f').reason, /control character/);
  });
  test('very long path', () => assert.match(rejected(`src/${'x'.repeat(5000)}`).reason, /limit is 4096/));
});

describe('isInside', () => {
  test('prefix trap: /tmp/ab is not inside /tmp/a', () => {
    assert.equal(isInside('/tmp/ab', '/tmp/a'), false);
    assert.equal(isInside('/tmp/a/b', '/tmp/a'), true);
    assert.equal(isInside('/tmp/a', '/tmp/a'), true);
    assert.equal(isInside('/tmp', '/tmp/a'), false);
    assert.equal(isInside('/x/y', '/'), true);
  });
  test('prefix trap on disk: a sibling dir whose name extends root', () => {
    const sibling = `${root}ab`;
    fs.mkdirSync(sibling);
    assert.match(rejected(path.join(sibling, 'f')).reason, /outside/);
  });
});

describe('resolveLockPaths', () => {
  test('deduplicates and sorts spellings of the same files', () => {
    const r = resolveLockPaths(['src/b.ts', './src/a.ts', 'srclink/a.ts', path.join(root, 'src/a.ts'), 'src/lib/'], root, root);
    assert.deepEqual(r, { ok: true, paths: [path.join(root, 'src/a.ts'), path.join(root, 'src/b.ts'), path.join(root, 'src/lib')] });
  });
  test('returns every rejection', () => {
    const r = resolveLockPaths(['src/a.ts', '../x', '', 'out/y'], root, root);
    assert.ok(!r.ok);
    assert.deepEqual(r.rejected.map((x) => x.input), ['../x', '', 'out/y']);
  });
  test('empty list is fine', () => assert.deepEqual(resolveLockPaths([], root, root), { ok: true, paths: [] }));
});

describe('resolveLockPath: `..` after a symlink applies to the link target, as in the kernel', () => {
  test('sub/up/../f with sub/up → .. lands outside the tree and is refused', () => {
    fs.mkdirSync(path.join(root, 'sub'), { recursive: true });
    fs.symlinkSync('..', path.join(root, 'sub', 'up'));
    // The kernel: <root>/sub/up is <root>, so <root>/sub/up/../f is <tmp>/f — outside.
    assert.match(rejected('sub/up/../f').reason, /outside the work tree/);
    assert.match(rejected(`${root}/sub/up/../f`).reason, /outside the work tree/);
    assert.equal(ok('sub/up/src/a.ts'), path.join(root, 'src/a.ts'));
  });

  test('inside the tree: a/l/../f with a/l → ../b/c is <root>/b/f, not <root>/a/f', () => {
    fs.mkdirSync(path.join(root, 'a'), { recursive: true });
    fs.mkdirSync(path.join(root, 'b', 'c'), { recursive: true });
    fs.symlinkSync('../b/c', path.join(root, 'a', 'l'));
    assert.equal(ok('a/l/../f'), path.join(root, 'b/f'));
  });

  test('a path deeper than the component limit is refused with a reason', () => {
    assert.match(rejected(`${'d/'.repeat(300)}f`).reason, /more than 256 path components/);
  });
});

describe('realTarget: where a write lands, for the permission policy', () => {
  test('follows symlinks out of the tree, dangling ones too; refuses loops', () => {
    assert.equal(realTarget('out/new.txt', root), path.join(outside, 'new.txt'));
    assert.equal(realTarget('dangling', root), path.join(tmp, 'nowhere', 'x'));
    assert.equal(realTarget('src/./lib/../a.ts', root), path.join(root, 'src/a.ts'));
    fs.symlinkSync('loop2', path.join(root, 'loop1'));
    fs.symlinkSync('loop1', path.join(root, 'loop2'));
    assert.equal(realTarget('loop1/x', root), undefined);
  });
});
