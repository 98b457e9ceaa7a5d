// The pure lock-key rules (src/domain/lockKeys.ts): one name per remote however it is written,
// the branch from HEAD (none when detached), key paths and back, and unshared trees.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { absPath, branchOfHead, keyString, lockItems, normaliseOrigin, relPath, repoKey, scopeOf, UNSHARED } from '../../src/domain/lockKeys.js';

test('one remote written every usual way has one name; credentials, ports, .git and slashes are dropped', () => {
  for (const url of [
    'git@github.com:Org/repo.git', 'https://github.com/Org/repo', 'https://user:s3cret@GitHub.com/Org/repo.git/', 'ssh://git@github.com:22/Org/repo',
    'git+ssh://git@github.com/Org/repo.git', 'http://github.com//Org/repo/',
  ]) assert.equal(normaliseOrigin(url, '/t'), 'github.com/Org/repo', url);
  assert.equal(normaliseOrigin('/srv/git/r.git', '/t'), 'file:/srv/git/r');
  assert.equal(normaliseOrigin('file:///srv/git/r/', '/t'), 'file:/srv/git/r');
  assert.equal(normaliseOrigin('../r', '/home/me/a'), 'file:/home/me/r', 'a relative remote is relative to the tree');
  assert.equal(normaliseOrigin('  ', '/t'), undefined);
  assert.ok(!normaliseOrigin('https://tok3n@example.com/x', '/t')!.includes('tok3n'));
});

test('the repository key: the origin when set, else the root commit, else none', () => {
  assert.equal(repoKey({ top: '/t', origin: 'git@host:o/r.git', rootCommit: 'abc' }), 'host/o/r');
  assert.equal(repoKey({ top: '/t', rootCommit: 'abc' }), 'root:abc');
  assert.equal(repoKey({ top: '/t' }), undefined);
});

test('the scope: key@branch with the top; detached HEAD, no key or no HEAD: unshared', () => {
  assert.equal(branchOfHead('ref: refs/heads/feature/x\n'), 'feature/x');
  assert.equal(branchOfHead('4b825dc642cb6eb9a060e54bf8d69288fbee4904\n'), undefined);
  assert.deepEqual(scopeOf('host/o/r', '/t', 'ref: refs/heads/main\n'), { repo: 'host/o/r@main', top: '/t' });
  assert.deepEqual(scopeOf('host/o/r', '/t', '4b825dc642cb6eb9a060e54bf8d69288fbee4904\n'), UNSHARED);
  assert.deepEqual(scopeOf(undefined, '/t', 'ref: refs/heads/main\n'), UNSHARED);
  assert.deepEqual(scopeOf('host/o/r', '/t', undefined), UNSHARED);
});

test('key paths: "/"-rooted under the top and back; unshared paths are their own key', () => {
  const s = { repo: 'host/o/r@main', top: '/c/a' };
  assert.equal(relPath(s, '/c/a/src/x.ts'), '/src/x.ts');
  assert.equal(relPath(s, '/c/a'), '/');
  assert.equal(absPath({ ...s, top: '/c/b' }, '/src/x.ts'), '/c/b/src/x.ts');
  assert.equal(absPath(s, '/'), '/c/a');
  assert.equal(relPath(UNSHARED, '/p/x'), '/p/x');
  assert.equal(absPath(UNSHARED, '/p/x'), '/p/x');
  assert.deepEqual(lockItems(s, ['/c/a/f']), [{ repo: 'host/o/r@main', rel: '/f', path: '/c/a/f' }]);
  assert.equal(keyString({ repo: 'host/o/r@main', rel: '/f' }), 'host/o/r@main:/f');
  assert.equal(keyString({ repo: '', rel: '/p/x' }), '/p/x');
});
