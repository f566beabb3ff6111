// `payable` of an application (spec 2.2, D10 "Applications", D8).

export interface PayableInput {
  status: string;
  /** Decision held back by the lot or `commit: false` (spec 2.2): the fee is not due yet. */
  heldBack: boolean;
  /** The fee this participant pays, in cents; null or 0 means free. */
  fee: number | null;
  /** Set by `PATCH payable:false` (spec 4.3). */
  payableSwitchedOff: boolean;
  /** The offer is cancelled (D5): none of its applications is payable while it is. Absent: false. */
  offerCancelled?: boolean;
}

/**
 * D10: true for a confirmed, committed application with a fee above 0 and payable not switched off; D5: never
 * while its offer is cancelled (a relaunch makes it payable again).
 */
export function isPayable(input: PayableInput): boolean {
  return input.status === 'confirmed' && !input.heldBack && (input.fee ?? 0) > 0 && !input.payableSwitchedOff && !input.offerCancelled;
}

/** D10: `PATCH payable:true` is only valid where the application could be payable (else `refused`). */
export function canSwitchPayableOn(input: Omit<PayableInput, 'payableSwitchedOff'>): boolean {
  return isPayable({ ...input, payableSwitchedOff: false });
}
