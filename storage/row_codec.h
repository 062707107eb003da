// Bytes of rows and keys, as the state store and commit payloads keep them.
// Internal to storage.
//
// Key (order-preserving: byte order of encodings = order of the key values,
// column by column, with null first):
//   key       := part*                      one per primary-key column
//   part      := 0x00                       null
//              | 0x01 fixed64_be(i ^ 2^63)   int64, timestamp
//              | 0x01 fixed64_be(ordered(d)) double (-0.0 as 0.0, NaN last)
//              | 0x01 (0x00 | 0x01)          bool
//              | 0x01 escaped 0x00 0x01      string, bytes: 0x00 -> 0x00 0xff
// Row:
//   row       := varint(column_count) null_bitmap value*   (non-null only;
//                the bitmap has a bit per column of the row)
//   value     := varint(zigzag(i))          int64, timestamp: small numbers
//                                           of either sign in few bytes
//              | fixed64_le                 double
//              | 0x00 | 0x01                bool
//              | varint(length) bytes       string, bytes
#pragma once

#include <string>
#include <string_view>

#include "spool/storage/schema.h"
#include "spool/storage/table.h"

namespace spool {

// Appends the order-preserving encoding of `row`'s key columns to `*out`.
// REQUIRES: schema.Validate(row).ok()
void EncodeKey(const Schema& schema, const Row& row, std::string* out);

// Appends the encoding of key values given in key order (a prefix of the
// key columns when `allow_prefix`). Errors: InvalidArgument naming the key
// column whose value does not fit.
Status EncodeKeyValues(const Schema& schema, const Row& key, bool allow_prefix, std::string* out);

// Appends the encoding of `row` to `*out`.
// REQUIRES: schema.Validate(row).ok()
void EncodeRow(const Schema& schema, const Row& row, std::string* out);

// Decodes a row of `schema`; a row written before columns were added has
// fewer values and reads them as null. Errors: Corruption saying what does not fit
// (truncated bytes, a column count or a value that does not match).
Status DecodeRow(const Schema& schema, std::string_view bytes, Row* row);
// The same, in place: `*view` points into `bytes` (and at `schema`).
Status ParseRow(const Schema& schema, std::string_view bytes, RowView* view);

}  // namespace spool
