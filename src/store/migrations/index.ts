/**
 * Every schema migration, in order. A plain array (not a directory scan) so the same
 * list works from tsx and from the compiled dist/, and other areas append their own
 * module with one line (0100_* and up belong to src/limits).
 */
import type { Knex } from 'knex';
import * as m0001 from './0001_initial.js';
import * as m0100 from './0100_limits.js';
import * as m0200 from './0200_charging.js';
import * as m0300 from './0300_console.js';
import * as m0400 from './0400_image_retention.js';
import * as m0500 from './0500_admission.js';
import * as m0600 from './0600_invitations.js';
import * as m0700 from './0700_audit_security.js';
import * as m0800 from './0800_session_grace.js';
import * as m0900 from './0900_totp.js';
import * as m0950 from './0950_password_must_change.js';

export interface Migration {
  name: string;
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

export const migrations: Migration[] = [
  { name: '0001_initial', ...m0001 },
  { name: '0100_limits', ...m0100 },
  { name: '0200_charging', ...m0200 },
  { name: '0300_console', ...m0300 },
  { name: '0400_image_retention', ...m0400 },
  { name: '0500_admission', ...m0500 },
  { name: '0600_invitations', ...m0600 },
  { name: '0700_audit_security', ...m0700 },
  { name: '0800_session_grace', ...m0800 },
  { name: '0900_totp', ...m0900 },
  { name: '0950_password_must_change', ...m0950 },
];
