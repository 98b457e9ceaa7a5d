// A small glob matcher for `worktree.copy` patterns (Node 20 has no stable fs.glob): `*` and `?`
// stay inside one path segment, `**` crosses segments, `{a,b}` is an alternative and `[...]` a
// class. Patterns are relative to the repository root with `/` separators; a pattern without a
// `/` matches a name at any depth, and one starting with `/` only at the root (like .gitignore). Pure.

/** A regular expression for `pattern`, anchored at both ends. */
export function globToRegExp(pattern: string): RegExp {
  const anchored = pattern.startsWith('/') || pattern.startsWith('./');
  const p = pattern.replace(/^\.\/+/, '').replace(/^\/+/, '');
  const anyDepth = !anchored && !p.includes('/');
  let re = '';
  let i = 0;
  let braces = 0;
  while (i < p.length) {
    const c = p[i]!;
    if (c === '*') {
      if (p[i + 1] === '*') {
        const slash = p[i + 2] === '/';
        re += slash ? '(?:.*/)?' : '.*';
        i += slash ? 3 : 2;
        continue;
      }
      re += '[^/]*';
    } else if (c === '?') {
      re += '[^/]';
    } else if (c === '[') {
      const end = p.indexOf(']', i + 1);
      if (end < 0) re += '\\[';
      else {
        const body = p.slice(i + 1, end).replace(/^!/, '^').replace(/\\/g, '\\\\');
        re += `[${body}]`;
        i = end;
      }
    } else if (c === '{') {
      braces++;
      re += '(?:';
    } else if (c === '}' && braces > 0) {
      braces--;
      re += ')';
    } else if (c === ',' && braces > 0) {
      re += '|';
    } else {
      re += c.replace(/[.+^${}()|\\]/g, '\\$&');
    }
    i++;
  }
  return new RegExp(`^${anyDepth ? '(?:.*/)?' : ''}${re}$`);
}

/** The paths (relative, `/`-separated) that match any of the patterns, in their given order. */
export function matchGlobs(paths: readonly string[], patterns: readonly string[]): string[] {
  const res = patterns.map(globToRegExp);
  return paths.filter((p) => res.some((r) => r.test(p.replace(/\/$/, ''))));
}
