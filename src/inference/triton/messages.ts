/**
 * TypeScript shapes of the v2 messages as @grpc/proto-loader produces them (keepCase,
 * longs as numbers, enums as strings, defaults filled). Only what this service uses.
 */

export interface InferParameter {
  bool_param?: boolean;
  int64_param?: number;
  string_param?: string;
  double_param?: number;
  uint64_param?: number;
  parameter_choice?: string;
}

export interface InferTensorContents {
  bool_contents?: boolean[];
  int_contents?: number[];
  int64_contents?: number[];
  uint_contents?: number[];
  uint64_contents?: number[];
  fp32_contents?: number[];
  fp64_contents?: number[];
  bytes_contents?: Buffer[];
}

export interface TensorMetadataMsg {
  name: string;
  datatype: string;
  shape: number[];
}

export interface ModelMetadataResponse {
  name: string;
  versions: string[];
  platform: string;
  inputs: TensorMetadataMsg[];
  outputs: TensorMetadataMsg[];
}

export interface InferInputTensorMsg {
  name: string;
  datatype: string;
  shape: number[];
  parameters?: Record<string, InferParameter>;
  contents?: InferTensorContents | null;
}

export interface ModelInferRequest {
  model_name: string;
  model_version: string;
  id: string;
  parameters?: Record<string, InferParameter>;
  inputs: InferInputTensorMsg[];
  outputs: Array<{ name: string; parameters?: Record<string, InferParameter> }>;
  raw_input_contents: Buffer[];
}

export interface InferOutputTensorMsg {
  name: string;
  datatype: string;
  shape: number[];
  parameters?: Record<string, InferParameter>;
  contents?: InferTensorContents | null;
}

export interface ModelInferResponse {
  model_name: string;
  model_version: string;
  id: string;
  parameters?: Record<string, InferParameter>;
  outputs: InferOutputTensorMsg[];
  raw_output_contents: Buffer[];
}

export type DataTypeEnum =
  | 'TYPE_INVALID' | 'TYPE_BOOL' | 'TYPE_UINT8' | 'TYPE_UINT16' | 'TYPE_UINT32' | 'TYPE_UINT64'
  | 'TYPE_INT8' | 'TYPE_INT16' | 'TYPE_INT32' | 'TYPE_INT64' | 'TYPE_FP16' | 'TYPE_FP32'
  | 'TYPE_FP64' | 'TYPE_STRING' | 'TYPE_BF16';

export interface ModelTensorMsg {
  name: string;
  data_type: DataTypeEnum;
  dims: number[];
  /** The model's own shape, when clients see `dims` instead. */
  reshape?: { shape: number[] } | null;
}

export interface ModelConfigMsg {
  name: string;
  platform: string;
  backend: string;
  max_batch_size: number;
  input: ModelTensorMsg[];
  output: ModelTensorMsg[];
  instance_group: Array<{ name: string; count: number; kind: string }>;
  default_model_filename: string;
  dynamic_batching?: { preferred_batch_size: number[]; max_queue_delay_microseconds: number } | null;
  scheduling_choice?: string;
}

export interface ModelConfigResponse {
  config: ModelConfigMsg | null;
}

export interface StatisticDuration {
  count: number;
  ns: number;
}

export interface ModelStatisticsMsg {
  name: string;
  version: string;
  last_inference: number;
  inference_count: number;
  execution_count: number;
  inference_stats: {
    success: StatisticDuration;
    fail: StatisticDuration;
    queue: StatisticDuration;
    compute_input: StatisticDuration;
    compute_infer: StatisticDuration;
    compute_output: StatisticDuration;
  };
  batch_stats: Array<{
    batch_size: number;
    compute_input: StatisticDuration;
    compute_infer: StatisticDuration;
    compute_output: StatisticDuration;
  }>;
}

export interface ModelStatisticsResponse {
  model_stats: ModelStatisticsMsg[];
}
