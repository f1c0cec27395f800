import type { ReactNode } from 'react';
import type { OrderOutcome } from './order-outcome.js';

/**
 * One order request's outcome as a line of the ticket, the amend form or the blotter: an ack is a
 * `status`, a reject or failure an `alert`; `data-kind`, and for a reject `data-field` and
 * `data-rule`, say which (styles and the e2e specs read them). `children` replace the default
 * text (`outcome.text`); `data` adds attributes (undefined ones are left out).
 */
export function OutcomeLine(props: {
  outcome: OrderOutcome;
  /** Class of the line; `outcome-<kind>` is added. */
  className: string;
  testId: string;
  data?: Readonly<Record<string, string | number | undefined>>;
  children?: ReactNode;
}): ReactNode {
  const { outcome } = props;
  return (
    <p
      className={`${props.className} outcome-${outcome.kind}`}
      role={outcome.kind === 'ack' ? 'status' : 'alert'}
      data-testid={props.testId}
      data-kind={outcome.kind}
      data-field={outcome.kind === 'reject' ? outcome.field : undefined}
      data-rule={outcome.kind === 'reject' ? outcome.rule : undefined}
      {...props.data}
    >
      {props.children ?? outcome.text}
    </p>
  );
}
