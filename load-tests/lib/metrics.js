// Custom metrics shared by the scenarios. Every sample carries the `endpoint` tag of the
// call it came from, so thresholds and the report can split them per operation.
import { Counter, Rate, Trend } from 'k6/metrics';

/** The server's own `processing_time_ms` from CVResult (time spent on the image, per the API). */
export const processingTime = new Trend('processing_time_ms', true);
/** Client latency minus processing_time_ms: HTTP, auth, limits, storage, serialisation. */
export const outsideProcessing = new Trend('outside_processing_ms', true);
/** Share of calls that answered with a status the scenario did not expect. */
export const unexpectedStatus = new Rate('unexpected_status');
/** Detections returned, to see that the model keeps finding things under load. */
export const detections = new Counter('detections');
/** Calls refused with 429, by error_code (RATE_LIMITED or MONTHLY_QUOTA_EXCEEDED). */
export const rejected429 = new Counter('rejected_429');
