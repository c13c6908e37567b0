/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The wire-format parser's drop reasons, in the order of enum
 * snaa_drop_reason (after SNAA_DROP_NONE), with their names: one line
 * SNAA_DROP(REASON, "name") each.  No include guard: whoever defines
 * SNAA_DROP() includes this list, and it undefines SNAA_DROP() again.
 * The enum (snaa_wire.h), the reasons' names (snaa_drop_reason_name())
 * and the driver's first drop counters, drop_<name> (snaa.h,
 * snaa_stats.c), are made from it.
 */
SNAA_DROP(TRUNCATED, "truncated")
SNAA_DROP(BAD_TVER, "bad_tver")
SNAA_DROP(BAD_OPCODE, "bad_opcode")
SNAA_DROP(UNSUPPORTED, "unsupported_opcode")
SNAA_DROP(BAD_QPN, "bad_qpn")
SNAA_DROP(BAD_PAD, "bad_pad")
SNAA_DROP(PAD_EXCEEDS_PAYLOAD, "pad_exceeds_payload")
SNAA_DROP(UNALIGNED, "unaligned_length")
SNAA_DROP(BAD_LENGTH, "bad_length")
SNAA_DROP(BAD_ICRC, "bad_icrc")
SNAA_DROP(BAD_PKEY, "bad_pkey")
SNAA_DROP(MTU, "mtu_exceeded")

#undef SNAA_DROP
