/** What every part of the console plugin shares. */
import type { Knex } from 'knex';
import type { ErrorCode } from '../api/errors.js';
import type { ImageUrlSigner } from '../images/types.js';
import type { SessionTtls } from '../store/sessions.js';
import type { PasswordHasher } from './passwords.js';
import type { LoginThrottle } from './throttle.js';
import type { Mailer } from './mail.js';

export interface ConsoleContext {
  db: Knex;
  signer: ImageUrlSigner;
  /** Labels of the model catalog, to check a key's classes against. */
  labels(): Promise<string[]>;
  throttle: LoginThrottle;
  /** Every password hash and check goes through it (a bounded queue). */
  passwords: PasswordHasher;
  ttl: SessionTtls;
  /** Secure cookies even on plain HTTP (the service behind a TLS-terminating proxy). */
  secureCookies: boolean;
  defaultRateLimitPerMinute: number;
  defaultMonthlyQuota: number;
  /** Base of the links the console hands out (invitations): PUBLIC_BASE_URL. */
  publicBaseUrl: string;
  /** SMTP_URL set: invitations are e-mailed (src/console/mail.ts); unset, the link is answered once. */
  mailer?: Mailer;
  /** Milliseconds since the epoch, for TOTP codes (tests drive it). */
  now(): number;
}

export const TAG = 'Console';
export const SECURITY: Array<Record<string, string[]>> = [{ consoleBearer: [] }, { consoleCookie: [] }];

/** The catalogue codes the console API answers with (beyond the operational ones). */
export const CONSOLE_ERRORS = [
  'VALIDATION_FAILED', 'UNAUTHENTICATED', 'INVALID_CREDENTIALS', 'REFRESH_REUSED', 'FORBIDDEN_ROLE', 'CSRF_FAILED',
  'NOT_FOUND', 'CONFLICT', 'LOGIN_THROTTLED', 'PASSWORD_HASHING_BUSY', 'INVALID_MFA_CODE', 'MFA_ENROLLMENT_REQUIRED', 'MFA_CHECK_REQUIRED',
  'PASSWORD_CHANGE_REQUIRED',
] as const satisfies readonly ErrorCode[];
