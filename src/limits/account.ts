// Which provider account a child's requests count against: one limiter per account. An account
// is the provider, the endpoint the children call and the credential they call it with, read from
// the environment the hub gives its children. The credential is only ever hashed: the id keeps 12
// hex digits of a SHA-256 over it, never the secret (docs/limits.md).
import { createHash } from 'node:crypto';
import { homedir } from 'node:os';
import { join } from 'node:path';

export type Provider = 'claude' | 'codex';

export interface Account {
  /** `<provider>|<endpoint>|<hash>`: the limiter's key in the store. */
  id: string;
  provider: Provider;
  /** The API base URL, or `bedrock:<region>` / `vertex:<region>:<project>`. */
  endpoint: string;
  /** 12 hex digits of SHA-256(provider, endpoint, credential or config directory). */
  keyHash: string;
}

const hash = (...parts: string[]): string => createHash('sha256').update(parts.join('\0')).digest('hex').slice(0, 12);

const on = (v: string | undefined): boolean => !!v && v !== '0' && v.toLowerCase() !== 'false';

function make(provider: Provider, endpoint: string, credential: string): Account {
  const keyHash = hash(provider, endpoint, credential);
  return { id: `${provider}|${endpoint}|${keyHash}`, provider, endpoint, keyHash };
}

/**
 * Claude Code's account: Bedrock or Vertex when switched on, else ANTHROPIC_BASE_URL (default the
 * Anthropic API) with ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN or CLAUDE_CODE_OAUTH_TOKEN; without
 * any of them the login in the config directory (CLAUDE_CONFIG_DIR, else ~/.claude) is the account.
 */
export function claudeAccount(env: NodeJS.ProcessEnv): Account {
  if (on(env.CLAUDE_CODE_USE_BEDROCK)) {
    return make('claude', `bedrock:${env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? 'default'}`,
      env.AWS_BEARER_TOKEN_BEDROCK ?? env.AWS_ACCESS_KEY_ID ?? `profile:${env.AWS_PROFILE ?? 'default'}`);
  }
  if (on(env.CLAUDE_CODE_USE_VERTEX)) {
    return make('claude', `vertex:${env.CLOUD_ML_REGION ?? 'default'}:${env.ANTHROPIC_VERTEX_PROJECT_ID ?? ''}`,
      env.GOOGLE_APPLICATION_CREDENTIALS ?? 'application-default');
  }
  const endpoint = (env.ANTHROPIC_BASE_URL || 'https://api.anthropic.com').replace(/\/+$/, '');
  const credential = env.ANTHROPIC_API_KEY || env.ANTHROPIC_AUTH_TOKEN || env.CLAUDE_CODE_OAUTH_TOKEN
    || `config:${env.CLAUDE_CONFIG_DIR || join(env.HOME || homedir(), '.claude')}`;
  return make('claude', endpoint, credential);
}

/**
 * Codex's account: the configured provider's base_url and the key its env_key names; without a
 * configured provider OPENAI_BASE_URL (default the OpenAI API) with CODEX_API_KEY or OPENAI_API_KEY,
 * else the login in CODEX_HOME (default ~/.codex).
 */
export function codexAccount(env: NodeJS.ProcessEnv, provider?: { base_url: string; env_key?: string }): Account {
  if (provider) {
    const key = provider.env_key ? env[provider.env_key] : undefined;
    return make('codex', provider.base_url.replace(/\/+$/, ''), key || 'no-key');
  }
  const endpoint = (env.OPENAI_BASE_URL || 'https://api.openai.com/v1').replace(/\/+$/, '');
  const credential = env.CODEX_API_KEY || env.OPENAI_API_KEY || `config:${env.CODEX_HOME || join(env.HOME || homedir(), '.codex')}`;
  return make('codex', endpoint, credential);
}

/** The account of each provider for children started with `env`. */
export function accounts(env: NodeJS.ProcessEnv, codexProvider?: { base_url: string; env_key?: string }): Record<Provider, Account> {
  return { claude: claudeAccount(env), codex: codexAccount(env, codexProvider) };
}

/** The endpoint's host for people ("api.anthropic.com", "127.0.0.1:4242", "bedrock:us-east-1"). */
export function endpointLabel(endpoint: string): string {
  try {
    return new URL(endpoint).host || endpoint;
  } catch {
    return endpoint;
  }
}
