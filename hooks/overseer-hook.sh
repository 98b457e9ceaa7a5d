#!/bin/sh
# Overseer's PreToolUse lock hook for command hooks (the lead's Claude Code, Codex children),
# without a Node start: POSIX sh (dash-compatible) + curl, ~2 process starts per edit instead of
# one Node (55–145 ms); run by bash (hookCommandLine picks it where there is one), it posts over
# bash's /dev/tcp instead, and the shell is the only process started. Same contract as overseer-hook.mjs, which it falls back to for what it
# does not handle itself: it forwards the hook input to the hub's POST /hook, and prints a
# PreToolUse deny when the hub's verdict is {"decision":"deny","reason":…} (nothing otherwise);
# the hub is the only judge, no policy here. (Not ?format=claude: that is the Claude children's
# HTTP hook, which the hub may answer with more than the lock check.)
#
# Fails CLOSED like the Node hook: a hub that is found but cannot be reached, times out (8 s),
# answers non-2xx or something that is not a verdict → a deny on stdout, exit 0 (Claude Code
# and Codex both read it; Codex would ALLOW on a hook error, so no error may escape).
#
# Usage: sh overseer-hook.sh [NODE]   (NODE: the node for the fallback; default: node on PATH)
# Who asks: OVERSEER_URL + OVERSEER_TOKEN (a child), else OVERSEER_HOME or the project's state
# directory found by walking up from CLAUDE_PROJECT_DIR (the lead: hub.json + lead.token).
# Falls back to `NODE overseer-hook.mjs` (same stdin) when curl is missing, when the lead's hub
# must be found from the hook input's cwd (no CLAUDE_PROJECT_DIR), or when something here is
# outside what plain sh can decide safely (an unusual hub.json, a non-ASCII directory name
# to hash, no sha256 tool, a pid it cannot probe).
#
# The bearer token never goes on curl's argv (visible in `ps`): curl reads the header from a
# here-document on fd 3 (-H @/dev/fd/3); printf and the here-document are shell built-ins.

case $0 in
  */*) HOOK_DIR=${0%/*} ;;
  *) HOOK_DIR=. ;;
esac
case $HOOK_DIR in /*) ;; *) HOOK_DIR=$PWD/$HOOK_DIR ;; esac
NODE=${1:-node}
TIMEOUT=8

# The hook input, byte for byte (the trailing x keeps trailing newlines); bash reads it to the
# end with its read built-in (no fork, no cat): `-N` reads a pipe in blocks (bash 4.1+; older
# bash, e.g. macOS's 3.2, reads it a byte per system call with `-d ''`).
if [ -n "$BASH_VERSION" ]; then
  case $BASH_VERSION in
    [123].*|4.0.*) IFS= read -r -d '' input ;;
    *) IFS= read -r -N 1000000000 input ;;
  esac
else
  input=$(cat; printf x)
  input=${input%x}
fi

fallback() {
  # The Node hook decides; it gets the same stdin.
  if command -v "$NODE" >/dev/null 2>&1; then
    printf '%s' "$input" | "$NODE" "$HOOK_DIR/overseer-hook.mjs"
    exit $?
  fi
  deny "Overseer's lock hook failed (it needs curl or node, and $1), so this edit is blocked. Retry; if it persists, install curl or node."
}

# A JSON string's inside: backslashes and quotes escaped, control characters dropped.
json_inner() {
  printf '%s' "$1" | tr -d '\000-\037' | sed 's/\\/\\\\/g; s/"/\\"/g'
}

deny() {
  printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"%s"}}\n' "$(json_inner "$1")"
  exit 0
}

# The input must at least look like one JSON object (the hub parses it for real). Whitespace
# is the POSIX class [:space:] (JSON's four, plus VT and FF): no literal CR in this file, and a
# backslash-newline would be a line continuation, even inside ${...}.
case $input in
  *[![:space:]]*) ;;
  *) deny "Overseer's lock hook failed (the hook input is empty), so this edit is blocked. Retry; if it persists, the hook input was not understood." ;;
esac
trimmed=${input#"${input%%[![:space:]]*}"}
trimmed=${trimmed%"${trimmed##*[![:space:]]}"}
case $trimmed in
  \{*\}) ;;
  *) deny "Overseer's lock hook failed (the hook input is not a JSON object), so this edit is blocked. Retry; if it persists, the hook input was not understood." ;;
esac

# (Under bash curl is only needed for what /dev/tcp does not take: see post_tcp.)
[ -n "$BASH_VERSION" ] || command -v curl >/dev/null 2>&1 || fallback "curl is not installed"

# hub.json at $1 → url and pid (0: no hub to ask); returns 1 when the file is absent or not JSON-shaped.
read_hub() {
  [ -r "$1" ] || return 1
  all=
  while IFS= read -r line || [ -n "$line" ]; do all="$all$line "; done < "$1"
  t=${all#"${all%%[! ]*}"}
  case $t in \{*) ;; *) return 1 ;; esac
  pid=0
  hub_url=
  case $all in
    *\"pid\"*)
      v=${all#*\"pid\"}; v=${v#"${v%%[!\ :]*}"}; v=${v%%[!0-9]*}
      [ -n "$v" ] && pid=$v ;;
  esac
  case $all in
    *\"url\"*)
      v=${all#*\"url\"}; v=${v#"${v%%[!\ :]*}"}
      case $v in
        \"*) v=${v#\"}; hub_url=${v%%\"*}
             case $hub_url in *\\*) fallback "hub.json has an escaped url" ;; esac ;;
        *) fallback "hub.json has an unusual url" ;;
      esac ;;
  esac
  return 0
}

alive() {
  kill -0 "$1" 2>/dev/null && return 0
  # EPERM (another user's hub) is alive too: /proc tells, where there is one.
  [ -d /proc/self ] || fallback "it cannot probe pid $1"
  [ -d "/proc/$1" ]
}

sha8() {
  if command -v sha256sum >/dev/null 2>&1; then h=$(printf '%s' "$1" | sha256sum)
  elif command -v shasum >/dev/null 2>&1; then h=$(printf '%s' "$1" | shasum -a 256)
  else fallback "no sha256sum"
  fi
  h=${h%%[!0-9a-f]*}
  [ ${#h} -ge 8 ] || fallback "sha256sum failed"
  h8=${h%"${h#????????}"}
}

# The state directory the hub keeps for the real directory $1 (src/config.ts, projectStateDir).
state_dir() {
  name=${1##*/}
  case $name in
    '') name=project ;;
    *[!A-Za-z0-9._-]*)
      case $name in *[!\ -~]*) fallback "a non-ASCII directory name" ;; esac
      name=$(printf '%s' "$name" | tr -c 'A-Za-z0-9._-' '_') ;;
  esac
  sha8 "$1"
  case $XDG_STATE_HOME in
    /*) base=$XDG_STATE_HOME ;;
    *) [ -n "$HOME" ] || fallback "HOME is not set"
       base=$HOME/.local/state ;;
  esac
  state="$base/overseer/projects/$name-$h8"
}

# The hub to ask (url, token), or exit 0 when no hub runs (the lead with no crew: nothing to check).
if [ -n "$OVERSEER_URL" ] && [ -n "$OVERSEER_TOKEN" ]; then
  url=$OVERSEER_URL
  token=$OVERSEER_TOKEN
else
  found=
  if [ -n "$OVERSEER_HOME" ]; then
    read_hub "$OVERSEER_HOME/hub.json" && found=$OVERSEER_HOME
  elif [ -n "$CLAUDE_PROJECT_DIR" ]; then
    case $CLAUDE_PROJECT_DIR in /*) ;; *) fallback "a relative CLAUDE_PROJECT_DIR" ;; esac
    d=$CLAUDE_PROJECT_DIR
    while :; do
      # cd -P in this shell (no fork): $PWD is then the real path; nothing later needs the old cwd.
      if cd -P -- "$d" 2>/dev/null; then
        state_dir "$PWD"
        if read_hub "$state/hub.json"; then found=$state; break; fi
      fi
      if read_hub "$d/.overseer/hub.json"; then found=$d/.overseer; break; fi
      # dirname, as node:path does it
      case $d in
        /) break ;;
        */*) p=${d%/*}; [ -n "$p" ] || p=/ ;;
        *) break ;;
      esac
      [ "$p" = "$d" ] && break
      d=$p
    done
  else
    fallback "the project directory comes from the hook input"
  fi
  [ -n "$found" ] || exit 0
  { [ "$pid" -gt 0 ] 2>/dev/null && alive "$pid" && [ -n "$hub_url" ]; } || exit 0
  url=$hub_url
  { IFS= read -r token || [ -n "$token" ]; } < "$found/lead.token" 2>/dev/null \
    || deny "Overseer's lock hook failed (cannot read $found/lead.token), so this edit is blocked. Retry; if it persists, the hook input was not understood."
  token=${token#"${token%%[![:space:]]*}"}
  token=${token%"${token##*[![:space:]]}"}
fi

case $url in
  http://*|https://*) ;;
  *) fallback "an unusual hub url" ;;
esac
rest=${url#*://}
hook_url="${url%%://*}://${rest%%/*}/hook"

# Under bash, a loopback hub over plain http and an input that fits the socket buffers: one
# POST over bash's own /dev/tcp, no curl start (the larger part of this hook's time). HTTP/1.0,
# so the hub answers unchunked and closes; `read -t` bounds the wait for the answer, and the
# input is small enough that writing it cannot block on a hub that does not read (a stopped hub:
# the kernel still takes it). Sets $answer as curl's branch does (body, newline, status code).
# The hub's whole answer from fd 4 into $resp, within $TIMEOUT s (blocks with -N where bash has it).
read_answer() {
  case $BASH_VERSION in
    [123].*|4.0.*) IFS= read -r -d '' -t "$TIMEOUT" resp <&4 ;;
    *) IFS= read -r -N 1000000 -t "$TIMEOUT" resp <&4 ;;
  esac
}

post_tcp() {
  hp=${rest%%/*}
  host=${hp%:*}
  port=${hp##*:}
  case $host in 127.0.0.1|localhost) ;; *) return 2 ;; esac
  case $port in ''|*[!0-9]*) return 2 ;; esac
  LC_ALL=C
  [ ${#input} -le 16384 ] || return 2
  resp=
  rc=7
  # A hub that drops the connection mid-request: printf fails with EPIPE instead of a SIGPIPE
  # killing the hook (a hook killed by a signal is an error, which Codex takes as an allow).
  trap '' PIPE
  { { printf 'POST /hook HTTP/1.0\r\nHost: %s\r\nContent-Type: application/json\r\nAuthorization: Bearer %s\r\nContent-Length: %s\r\n\r\n%s' "$hp" "$token" "${#input}" "$input" >&4 \
    && read_answer; rc=$?; } 4<>"/dev/tcp/$host/$port"; } 2>/dev/null
  # read ends with 1 at the end of the stream (the hub closed: the whole answer is in); over 128: timed out.
  if [ "$rc" -gt 128 ]; then unreachable "no answer within $TIMEOUT s"; fi
  case $resp in
    'HTTP/1.'[01]' '[0-9][0-9][0-9]*) ;;
    *) unreachable "connection refused or closed" ;;
  esac
  code=${resp#HTTP/1.? }
  code=${code%"${code#???}"}
  case $resp in
    *"

"*) ;;
  esac
  body=${resp#*"$CRLF$CRLF"}
  answer="$body
$code"
  return 0
}
unreachable() {
  deny "Overseer's lock hook could not reach the hub at $url ($1), so edits are blocked to keep file locks safe. Retry in a moment; if the hub is gone, the lead must restart it."
}

if [ -n "$BASH_VERSION" ] && [ "${url%%://*}" = http ] && CRLF=$'\r\n' && post_tcp; then
  :
else
command -v curl >/dev/null 2>&1 || fallback "curl is not installed"
# One POST, no proxy, no ~/.curlrc (-q), no Expect: 100-continue round trip; status on the last line.
answer=$(printf '%s' "$input" | curl -q --silent --show-error --noproxy '*' --max-time "$TIMEOUT" \
  -X POST -H 'content-type: application/json' -H 'Expect:' -H @/dev/fd/3 --data-binary @- \
  -w '\n%{http_code}' -- "$hook_url" 2>&1 3<<EOF
Authorization: Bearer $token
EOF
)
rc=$?
if [ $rc -ne 0 ]; then
  # curl's own message (its stderr line "curl: (7) …"), wherever the -w line ended up.
  case $answer in
    *'curl: '*) msg=${answer#*curl: }; msg=${msg%%
*} ;;
    *) msg="curl exit $rc" ;;
  esac
  case $rc in 28) msg="no answer within $TIMEOUT s ($msg)" ;; esac
  unreachable "$msg"
fi
fi
code=${answer##*
}
body=${answer%
*}
case $code in
  200) ;;
  *) unreachable "hub answered $code: $(printf '%.200s' "$body")" ;;
esac
# The verdict: a JSON object; "decision":"deny" cannot occur inside a JSON string (its quotes
# would be escaped), so it is the hub's decision. The reason goes out as the hub wrote it.
case $body in
  \{*\}) ;;
  *) unreachable "hub answered something that is not JSON" ;;
esac
case $body in
  *'"decision":"deny"'*)
    # The reason's JSON string, as written: segments up to each quote, until one that is not
    # escaped (an even run of backslashes before it). Built-ins only, no sed.
    reason=
    case $body in
      *'"reason":"'*)
        r=${body#*'"reason":"'}
        acc=
        while :; do
          case $r in *\"*) ;; *) acc=; break ;; esac
          seg=${r%%\"*}
          r=${r#*\"}
          bs=${seg##*[!\\]}
          acc=$acc$seg
          [ $((${#bs} % 2)) -eq 1 ] || break
          acc=$acc\"
        done
        [ -n "$acc" ] && reason="\"$acc\"" ;;
    esac
    [ -n "$reason" ] || reason='"denied by Overseer"'
    printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":%s}}\n' "$reason" ;;
esac
exit 0
