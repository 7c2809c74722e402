/** A RecognitionService as the API server returns it after defaulting. */
import type { RecognitionService } from '../../src/operator/api/types.js';
import { withDefaults } from '../../src/operator/api/defaults.js';

export function sampleResource(overrides: Partial<RecognitionService['spec']> = {}, name = 'vision'): RecognitionService {
  return withDefaults({
    apiVersion: 'cv.recognition.io/v1alpha1',
    kind: 'RecognitionService',
    metadata: { name, namespace: 'prod', uid: '1b4e28ba-2fa1-11d2-883f-0016d3cca427', generation: 3 },
    spec: {
      api: {
        image: 'registry.example/recognition-service:1.2.3',
        databaseUrlSecretRef: { name: 'recog-secrets', key: 'DATABASE_URL' },
        redisUrlSecretRef: { name: 'recog-secrets', key: 'REDIS_URL' },
        replicas: { min: 2, max: 6 },
        imageStorage: { s3: { bucket: 'vision-images', prefix: 'images', region: 'us-east-1', forcePathStyle: false, presignedUrls: false } },
      },
      triton: { storageUri: 's3://models-bucket/recognition' },
      ...overrides,
    } as RecognitionService['spec'],
  });
}
