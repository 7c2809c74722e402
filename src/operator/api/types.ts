/**
 * The RecognitionService custom resource (cv.recognition.io/v1alpha1) as TypeScript types,
 * derived from its schema (schema.ts) so the two cannot disagree. Spec types describe the
 * object after defaulting (withDefaults), which is all the desired-state builders see.
 */
import type { Static } from '@sinclair/typebox';
import type {
  ApiSpecSchema,
  ConditionSchema,
  EnvVarSchema,
  RecognitionServiceSpecSchema,
  RecognitionServiceStatusSchema,
  TritonSpecSchema,
} from './schema.js';

export const GROUP = 'cv.recognition.io';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const KIND = 'RecognitionService';
export const PLURAL = 'recognitionservices';

export type RecognitionServiceSpec = Static<typeof RecognitionServiceSpecSchema>;
export type ApiSpec = Static<typeof ApiSpecSchema>;
export type TritonSpec = Static<typeof TritonSpecSchema>;
export type EnvVar = Static<typeof EnvVarSchema>;
export type SecretKeyRef = ApiSpec['databaseUrlSecretRef'];
export type ReplicaRange = ApiSpec['replicas'];
export type ResourceRequirements = ApiSpec['resources'];
export type AutoscalingSpec = RecognitionServiceSpec['autoscaling'];
export type ComponentAutoscaling = NonNullable<AutoscalingSpec['api']>;
export type DisruptionSpec = RecognitionServiceSpec['podDisruptionBudget'];
export type CanarySpec = NonNullable<RecognitionServiceSpec['canary']>;
export type CanaryAnalysis = NonNullable<CanarySpec['analysis']>;

export type RecognitionServiceStatus = Static<typeof RecognitionServiceStatusSchema>;
export type Condition = Static<typeof ConditionSchema>;
export type ConditionType = Condition['type'];
export type ConditionStatus = Condition['status'];
export type ComponentStatus = NonNullable<RecognitionServiceStatus['api']>;
export type FailureRecord = NonNullable<RecognitionServiceStatus['lastFailure']>;
export type RolloutStatus = NonNullable<RecognitionServiceStatus['rollout']>;
export type AnalysisStatus = NonNullable<RolloutStatus['analysis']>;
export type SideFigures = NonNullable<AnalysisStatus['canary']>;

/** The API server's metadata, as far as the operator reads it. */
export interface ObjectMeta {
  name: string;
  namespace: string;
  uid: string;
  generation?: number;
  resourceVersion?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface RecognitionService {
  apiVersion: typeof API_VERSION;
  kind: typeof KIND;
  metadata: ObjectMeta;
  spec: RecognitionServiceSpec;
  status?: RecognitionServiceStatus;
}
