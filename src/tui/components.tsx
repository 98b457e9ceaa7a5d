// The watch's presentational components: given lines and sizes, they draw; no state, no input.
// Every line is one ink <Text wrap="truncate-end">, so nothing ever wraps onto a second row and
// the screen keeps its height.
import type { ReactNode } from 'react';
import { Box, Text } from 'ink';
import type { Floor } from '../floor/types.js';
import { briefLine, headerLines } from './format.js';
import { KEY_HELP } from './keys.js';
import { GUTTER, type Line, type Tone } from './screen.js';

const TONE: Record<Tone, { color?: string; bold?: boolean; dimColor?: boolean }> = {
  heading: { color: 'cyan', bold: true },
  need: { color: 'yellow' },
  text: {},
  dim: { dimColor: true },
  warn: { color: 'yellow' },
  bad: { color: 'red' },
  good: { color: 'green' },
};

/** A status-bar message and how to show it. */
export interface Status {
  text: string;
  tone: 'info' | 'ok' | 'error' | 'ask';
}

const STATUS_COLOR: Record<Status['tone'], string | undefined> = { info: undefined, ok: 'green', error: 'red', ask: 'yellow' };

export function Header({ floor, now, width, source }: { floor: Floor | null; now: number; width: number; source: string }): React.JSX.Element {
  const [a, b] = floor ? headerLines(floor, now, width) : [`overseer watch · ${source}`, 'waiting for the first floor…'];
  return (
    <Box flexDirection="column">
      <Text bold wrap="truncate-end">{a}</Text>
      <Text wrap="truncate-end">{b}</Text>
      {floor?.brief ? <Text wrap="truncate-end" color="magenta">{briefLine(floor.brief, width)}</Text> : null}
    </Box>
  );
}

/** `height` lines of the list starting at `top`, the selected row's lines highlighted. */
export function Body({ lines, top, height, selKey }: { lines: readonly Line[]; top: number; height: number; selKey: string | null }): React.JSX.Element {
  const shown = lines.slice(top, top + height);
  return (
    <Box flexDirection="column" height={height}>
      {shown.map((l, i) => {
        const sel = l.key === selKey;
        const firstOfRow = sel && lines[top + i - 1]?.key !== l.key;
        return (
          <Text key={`${l.key}#${i}`} wrap="truncate-end" inverse={sel} {...TONE[l.tone]}>
            {(firstOfRow ? '▶' : ' ').padEnd(GUTTER)}{l.text}
          </Text>
        );
      })}
    </Box>
  );
}

export function StatusBar({ status, hint }: { status: Status | null; hint: string }): React.JSX.Element {
  return status
    ? <Text wrap="truncate-end" color={STATUS_COLOR[status.tone]}>{status.text}</Text>
    : <Text wrap="truncate-end" dimColor>{hint}</Text>;
}

/** The `?` screen. */
export function Help({ height }: { height: number }): React.JSX.Element {
  return (
    <Box flexDirection="column" height={height}>
      <Text bold color="cyan">KEYS (any key returns)</Text>
      {KEY_HELP.map(([k, what]) => (
        <Text key={k} wrap="truncate-end"><Text bold>{k.padEnd(10)}</Text>{what}</Text>
      ))}
    </Box>
  );
}

const diffColor = (l: string): string | undefined => (l.startsWith('+') && !l.startsWith('+++') ? 'green' : l.startsWith('-') && !l.startsWith('---') ? 'red' : l.startsWith('@@') ? 'cyan' : undefined);

/** A full-screen page of text lines (log or diff): a title, `height` lines from `top`, a footer. */
export function Pager({ title, lines, top, height, footer, colorDiff }: { title: string; lines: readonly string[]; top: number; height: number; footer: string; colorDiff?: boolean }): React.JSX.Element {
  const shown = lines.slice(top, top + height);
  return (
    <Box flexDirection="column">
      <Text bold wrap="truncate-end">{title}</Text>
      <Box flexDirection="column" height={height}>
        {shown.map((l, i) => <Text key={top + i} wrap="truncate-end" color={colorDiff ? diffColor(l) : undefined}>{l === '' ? ' ' : l}</Text>)}
      </Box>
      <Text dimColor wrap="truncate-end">{footer}</Text>
    </Box>
  );
}

/** The list screen: header, the window of lines, and a last line (status bar, prompt or y/n). */
export function ListScreen(p: { floor: Floor | null; source: string; now: number; width: number; lines: readonly Line[]; top: number; bodyHeight: number; selKey: string | null; empty: string | null; footer: ReactNode }): React.JSX.Element {
  return (
    <Box flexDirection="column" width={p.width}>
      <Header floor={p.floor} now={p.now} width={p.width} source={p.source} />
      {p.empty !== null
        ? <Box height={p.bodyHeight}><Text dimColor wrap="truncate-end">{p.empty}</Text></Box>
        : <Body lines={p.lines} top={p.top} height={p.bodyHeight} selKey={p.selKey} />}
      {p.footer}
    </Box>
  );
}
