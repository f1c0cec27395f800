/**
 * @tidewire/client: the Tidewire client SDK (browser and Node 20+).
 * In Node pass `ws`'s WebSocket: `new TidewireClient({ url, WebSocket })`.
 */

export { TidewireClient } from './client.js';
export { TidewireError, type ClientErrorCode, type TidewireErrorCode, type TidewireErrorDetail } from './errors.js';
export { backoffDelayMs } from './backoff.js';
export type { AdminMetricsHandler, AdminMetricsStream } from './admin-stream.js';
export { OrderRejectedError, type OrderAmendment, type OrderRequest } from './orders.js';
export { statementColumn, type StatementInfo } from './statements.js';
export { applyViewRows, type ViewHandle, type ViewHandler, type ViewRequest, type ViewRow } from './views.js';
export type * from './types.js';
export type {
  AdminMetrics, FieldType, FieldTypes, FieldValue, Fields, RecordUpdate, RecordImage,
  OrderAck, OrderAction, OrderReject, OrderRejectField, OrderRejectRule, OrderSide, OrderStatus, TimeInForce, TradeRecordFields,
} from '@tidewire/protocol';
export { ORDER_STATUS_CODES, blotterSubject, tradeSubject } from '@tidewire/protocol';
