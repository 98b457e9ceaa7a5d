// A small syntax highlighter for the Changes tab (our own, ~4 KB, no dependency): comments,
// strings, numbers, keywords, function names and keys for the languages agents usually touch.
// A diff is shown line by line, so the lexer works one line at a time and carries what is still
// open at the end of a line (a block comment, a template or triple-quoted string) to the next.
// The result is tokens, rendered as text nodes in spans: nothing is ever parsed as HTML.
const words = (s) => new Set(s.split(' '));

const C_KW = 'if else for while do switch case default break continue return goto sizeof typedef struct union enum static const volatile extern inline void char short int long float double signed unsigned bool true false NULL nullptr class public private protected virtual override template typename namespace using new delete this throw try catch';
const JS = {
  line: ['//'], block: [['/*', '*/']], quotes: ['`', '"', "'"], multi: ['`'],
  kw: words('await break case catch class const continue debugger default delete do else export extends finally for from function if import in instanceof let new of return static super switch this throw try typeof var void while with yield async as interface type enum implements declare readonly keyof satisfies namespace abstract private protected public true false null undefined'),
};
const LANGS = {
  js: JS,
  py: { line: ['#'], quotes: ['"""', "'''", '"', "'"], multi: ['"""', "'''"], kw: words('and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield True False None self match case') },
  go: { line: ['//'], block: [['/*', '*/']], quotes: ['`', '"', "'"], multi: ['`'], kw: words('break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var true false nil iota') },
  rust: { line: ['//'], block: [['/*', '*/']], quotes: ['"'], kw: words('as async await break const continue crate dyn else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while Some None Ok Err') },
  c: { line: ['//'], block: [['/*', '*/']], quotes: ['"', "'"], kw: words(C_KW) },
  java: { line: ['//'], block: [['/*', '*/']], quotes: ['"', "'"], kw: words(`${C_KW} package import extends implements interface final abstract synchronized instanceof super fun val var when object companion data sealed`) },
  sh: { line: ['#'], quotes: ['"', "'"], kw: words('if then else elif fi for while until do done case esac in function return local export set unset readonly shift exit echo cd source true false') },
  json: { quotes: ['"'], kw: words('true false null'), key: /"(?:[^"\\]|\\.)*"(?=\s*:)/y },
  css: { block: [['/*', '*/']], quotes: ['"', "'"], kw: words('important inherit initial unset none auto'), key: /[\w-]+(?=\s*:[^:])/y },
  yaml: { line: ['#'], quotes: ['"', "'"], kw: words('true false null yes no'), key: /[\w.-]+(?=:(\s|$))/y },
  toml: { line: ['#'], quotes: ['"""', '"', "'"], multi: ['"""'], kw: words('true false'), key: /[\w.-]+(?=\s*=)/y },
  sql: { line: ['--'], block: [['/*', '*/']], quotes: ["'", '"'], kw: words('select from where insert into values update set delete create table index view drop alter add column primary key foreign references join left right inner outer on and or not null is in as order by group having limit offset union all distinct case when then else end begin commit with returning if exists integer text real blob'), ci: true },
  rb: { line: ['#'], quotes: ['"', "'"], kw: words('def end if elsif else unless while until for in do return class module self nil true false and or not begin rescue ensure yield require puts') },
  html: { block: [['<!--', '-->']], quotes: ['"', "'"], kw: new Set(), tag: /<\/?[\w-]+|\/?>/y, key: /[\w-]+(?==)/y },
  md: { kw: new Set(), heading: true, quotes: ['`'] },
};
const EXT = {
  js: 'js', mjs: 'js', cjs: 'js', jsx: 'js', ts: 'js', tsx: 'js', mts: 'js', cts: 'js', py: 'py', go: 'go', rs: 'rust',
  c: 'c', h: 'c', cc: 'c', cpp: 'c', hpp: 'c', cs: 'c', swift: 'c', java: 'java', kt: 'java', scala: 'java',
  sh: 'sh', bash: 'sh', zsh: 'sh', json: 'json', css: 'css', scss: 'css', less: 'css', yml: 'yaml', yaml: 'yaml', toml: 'toml',
  sql: 'sql', rb: 'rb', html: 'html', htm: 'html', xml: 'html', svg: 'html', vue: 'html', md: 'md', markdown: 'md',
};

/** The language of a file path, or undefined (shown plain). */
export function langOf(path) {
  const base = path.split('/').pop() ?? '';
  if (base === 'Dockerfile' || base === 'Makefile') return 'sh';
  return EXT[base.includes('.') ? base.split('.').pop().toLowerCase() : ''];
}

const NUM = /(?:0x[\da-fA-F_]+|\d[\d_]*(?:\.\d+)?(?:[eE][+-]?\d+)?)\b/y;
const WORD = /[A-Za-z_$][\w$]*/y;

function at(re, line, i) {
  re.lastIndex = i;
  const m = re.exec(line);
  return m ? m[0] : undefined;
}

/**
 * One line as tokens `[class, text]` ('' = plain; 'com', 'str', 'num', 'kw', 'fn', 'key'),
 * and the state to pass with the next line (what is still open at the end of this one).
 */
export function highlightLine(line, lang, state = null) {
  const L = LANGS[lang];
  if (!L) return { tokens: [['', line]], state: null };
  const out = [];
  let plain = '';
  const push = (cls, s) => {
    if (!s) return;
    if (!cls) { plain += s; return; }
    if (plain) { out.push(['', plain]); plain = ''; }
    out.push([cls, s]);
  };
  let i = 0;
  if (state) {
    const j = line.indexOf(state.end);
    if (j < 0) return { tokens: [[state.cls, line]], state };
    push(state.cls, line.slice(0, j + state.end.length));
    i = j + state.end.length;
    state = null;
  }
  if (L.heading && /^#{1,6}\s/.test(line)) return { tokens: [['kw', line]], state: null };
  while (i < line.length) {
    if (L.line?.some((t) => line.startsWith(t, i))) { push('com', line.slice(i)); break; }
    const b = L.block?.find(([o]) => line.startsWith(o, i));
    if (b) {
      const j = line.indexOf(b[1], i + b[0].length);
      if (j < 0) { push('com', line.slice(i)); state = { end: b[1], cls: 'com' }; break; }
      push('com', line.slice(i, j + b[1].length));
      i = j + b[1].length;
      continue;
    }
    const key = L.key && at(L.key, line, i);
    if (key) { push('key', key); i += key.length; continue; }
    const tag = L.tag && at(L.tag, line, i);
    if (tag) { push('kw', tag); i += tag.length; continue; }
    const q = L.quotes?.find((t) => line.startsWith(t, i));
    if (q) {
      let j = i + q.length;
      while (j < line.length && !line.startsWith(q, j)) j += line[j] === '\\' && q.length === 1 ? 2 : 1;
      if (j >= line.length) {
        push('str', line.slice(i));
        if (L.multi?.includes(q)) state = { end: q, cls: 'str' };
        break;
      }
      push('str', line.slice(i, j + q.length));
      i = j + q.length;
      continue;
    }
    const prevWord = i > 0 && /[\w$]/.test(line[i - 1]);
    const num = !prevWord && at(NUM, line, i);
    if (num) { push('num', num); i += num.length; continue; }
    const w = !prevWord && at(WORD, line, i);
    if (w) {
      const kw = L.ci ? L.kw.has(w.toLowerCase()) : L.kw.has(w);
      push(kw ? 'kw' : line[i + w.length] === '(' ? 'fn' : '', w);
      i += w.length;
      continue;
    }
    push('', line[i]);
    i++;
  }
  if (plain) out.push(['', plain]);
  return { tokens: out, state };
}
