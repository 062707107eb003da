#include "row_codec.h"

#include <bit>
#include <cmath>
#include <cstring>

#include "invariant.h"
#include "varint.h"

namespace spool {
namespace {

static_assert(std::endian::native == std::endian::little);

constexpr char kNullPart = '\x00';
constexpr char kValuePart = '\x01';
constexpr uint64_t kSignBit = 1ull << 63;

// Maps a double to an unsigned integer with the same order.
uint64_t OrderedDouble(double d) {
  if (d == 0.0) d = 0.0;  // -0.0 == 0.0
  if (std::isnan(d)) return UINT64_MAX;
  const uint64_t bits = std::bit_cast<uint64_t>(d);
  return (bits & kSignBit) != 0 ? ~bits : bits | kSignBit;
}

// Each zero byte followed by 0xff, then the terminator 0x00 0x01: written
// into room made once (at most twice the bytes, and the terminator).
void PutEscaped(std::string* out, std::string_view bytes) {
  const size_t at = out->size();
  out->resize(at + 2 * bytes.size() + 2);
  char* p = out->data() + at;
  for (char c : bytes) {
    *p++ = c;
    if (c == '\x00') *p++ = '\xff';
  }
  *p++ = '\x00';
  *p++ = '\x01';
  out->resize(static_cast<size_t>(p - out->data()));
}

void EncodeKeyPart(const Value& value, std::string* out) {
  if (IsNull(value)) {
    out->push_back(kNullPart);
    return;
  }
  out->push_back(kValuePart);
  if (const auto* i = std::get_if<int64_t>(&value)) {
    PutBigEndian64(out, static_cast<uint64_t>(*i) ^ kSignBit);
  } else if (const auto* t = std::get_if<Timestamp>(&value)) {
    PutBigEndian64(out, static_cast<uint64_t>(t->micros) ^ kSignBit);
  } else if (const auto* d = std::get_if<double>(&value)) {
    PutBigEndian64(out, OrderedDouble(*d));
  } else if (const auto* b = std::get_if<bool>(&value)) {
    out->push_back(*b ? '\x01' : '\x00');
  } else if (const auto* s = std::get_if<std::string>(&value)) {
    PutEscaped(out, *s);
  } else {
    PutEscaped(out, std::get<Bytes>(value).data);
  }
}

uint64_t ZigZag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }
int64_t UnZigZag(uint64_t u) { return static_cast<int64_t>(u >> 1) ^ -static_cast<int64_t>(u & 1); }

// Sizes and writes one non-null value: the row is sized first and written
// in place (EncodeRow), rather than appended to piece by piece.
size_t ValueBytes(const Value& value) {
  switch (TypeOf(value)) {
    case ColumnType::kInt64:
      return VarintLength(ZigZag(std::get<int64_t>(value)));
    case ColumnType::kDouble:
      return 8;
    case ColumnType::kString:
      return VarintLength(std::get<std::string>(value).size()) + std::get<std::string>(value).size();
    case ColumnType::kBool:
      return 1;
    case ColumnType::kTimestamp:
      return VarintLength(ZigZag(std::get<Timestamp>(value).micros));
    case ColumnType::kBytes:
      break;
  }
  return VarintLength(std::get<Bytes>(value).data.size()) + std::get<Bytes>(value).data.size();
}

uint8_t* PutBytes(uint8_t* out, std::string_view bytes) {
  out = EncodeVarint(out, bytes.size());
  std::memcpy(out, bytes.data(), bytes.size());
  return out + bytes.size();
}

uint8_t* PutValue(uint8_t* out, const Value& value) {
  switch (TypeOf(value)) {
    case ColumnType::kInt64:
      return EncodeVarint(out, ZigZag(std::get<int64_t>(value)));
    case ColumnType::kDouble: {
      const uint64_t bits = std::bit_cast<uint64_t>(std::get<double>(value));
      std::memcpy(out, &bits, 8);
      return out + 8;
    }
    case ColumnType::kString:
      return PutBytes(out, std::get<std::string>(value));
    case ColumnType::kBool:
      *out = std::get<bool>(value) ? 1 : 0;
      return out + 1;
    case ColumnType::kTimestamp:
      return EncodeVarint(out, ZigZag(std::get<Timestamp>(value).micros));
    case ColumnType::kBytes:
      break;
  }
  return PutBytes(out, std::get<Bytes>(value).data);
}

}  // namespace

void EncodeKey(const Schema& schema, const Row& row, std::string* out) {
  SPOOL_DCHECK(schema.Validate(row).ok(), "a row is encoded after its table's schema accepted it");
  for (size_t index : schema.key_columns()) EncodeKeyPart(row[index], out);
}

Status EncodeKeyValues(const Schema& schema, const Row& key, bool allow_prefix, std::string* out) {
  const auto& columns = schema.key_columns();
  if (key.size() > columns.size() || (!allow_prefix && key.size() != columns.size())) {
    return Status::InvalidArgument("a key of this table has " + std::to_string(columns.size()) + " column(s), not " +
                                   std::to_string(key.size()));
  }
  for (size_t i = 0; i < key.size(); ++i) {
    const Column& column = schema.columns()[columns[i]];
    if (IsNull(key[i]) || TypeOf(key[i]) != column.type) {
      return Status::InvalidArgument("key column '" + column.name + "' needs a value of type " +
                                     std::string(ColumnTypeName(column.type)));
    }
  }
  for (const Value& value : key) EncodeKeyPart(value, out);
  return Status::OK();
}

void EncodeRow([[maybe_unused]] const Schema& schema, const Row& row, std::string* out) {
  SPOOL_DCHECK(schema.Validate(row).ok(), "a row is encoded after its table's schema accepted it");
  const size_t bitmap_bytes = (row.size() + 7) / 8;
  size_t bytes = VarintLength(row.size()) + bitmap_bytes;
  for (const Value& value : row) bytes += IsNull(value) ? 0 : ValueBytes(value);
  const size_t at = out->size();
  out->resize(at + bytes);  // the bitmap's bytes zero
  auto* p = reinterpret_cast<uint8_t*>(out->data() + at);
  p = EncodeVarint(p, row.size());
  uint8_t* bitmap = p;
  p += bitmap_bytes;
  for (size_t i = 0; i < row.size(); ++i) {
    if (IsNull(row[i])) bitmap[i / 8] = static_cast<uint8_t>(bitmap[i / 8] | (1 << (i % 8)));
    else p = PutValue(p, row[i]);
  }
  SPOOL_DCHECK(p == reinterpret_cast<uint8_t*>(out->data() + at + bytes),
               "a row's encoding fills the bytes it measured");
}

// Fills RowView: the friend through which ParseRow reaches its fields.
class RowParser {
 public:
  static Status Parse(const Schema& schema, std::string_view bytes, RowView* view) {
    uint64_t count = 0;
    if (!GetVarint(&bytes, &count) || count > schema.columns().size()) {
      return Status::Corruption("row has more columns than the schema");
    }
    const size_t bitmap_bytes = (static_cast<size_t>(count) + 7) / 8;
    if (bytes.size() < bitmap_bytes) return Status::Corruption("row is truncated in its null bitmap");
    const std::string_view bitmap = bytes.substr(0, bitmap_bytes);
    bytes.remove_prefix(bitmap_bytes);
    view->schema_ = &schema;
    view->fields_.assign(schema.columns().size(), std::string_view());
    // Columns added after the row was written read as null.
    for (size_t i = static_cast<size_t>(count); i < schema.columns().size(); ++i) {
      if (!schema.columns()[i].nullable) return Status::Corruption("row lacks a value for a non-nullable column");
    }
    for (size_t i = 0; i < count; ++i) {
      const bool null = (static_cast<uint8_t>(bitmap[i / 8]) >> (i % 8) & 1) != 0;
      if (null) {
        if (!schema.columns()[i].nullable) return Status::Corruption("row has a null in a non-nullable column");
        continue;
      }
      SPOOL_RETURN_IF_ERROR(ParseValue(schema.columns()[i].type, &bytes, &view->fields_[i]));
    }
    if (!bytes.empty()) return Status::Corruption("row has bytes past its last value");
    return Status::OK();
  }

 private:
  // The encoded value at the front of `*in`: for strings and bytes, their
  // bytes (a non-null view even when empty).
  static Status ParseValue(ColumnType type, std::string_view* in, std::string_view* field) {
    size_t size = 0;
    switch (type) {
      case ColumnType::kInt64:
      case ColumnType::kTimestamp: {
        std::string_view rest = *in;
        uint64_t unused = 0;
        if (!GetVarint(&rest, &unused)) return Status::Corruption("row has a bad integer");
        size = in->size() - rest.size();
        break;
      }
      case ColumnType::kDouble:
        if (in->size() < 8) return Status::Corruption("row is truncated inside a fixed-width value");
        size = 8;
        break;
      case ColumnType::kBool:
        if (in->empty() || static_cast<uint8_t>(in->front()) > 1) return Status::Corruption("row has a bad bool");
        size = 1;
        break;
      case ColumnType::kString:
      case ColumnType::kBytes: {
        uint64_t length = 0;
        if (!GetVarint(in, &length) || length > in->size()) return Status::Corruption("row has a bad length");
        size = static_cast<size_t>(length);
        break;
      }
      default:
        return Status::Corruption("unknown column type");
    }
    // A zero-length value still points into the row, so it is not null.
    *field = std::string_view(in->data(), size);
    in->remove_prefix(size);
    return Status::OK();
  }
};

Status ParseRow(const Schema& schema, std::string_view bytes, RowView* view) {
  return RowParser::Parse(schema, bytes, view);
}

Status DecodeRow(const Schema& schema, std::string_view bytes, Row* row) {
  RowView view;
  SPOOL_RETURN_IF_ERROR(ParseRow(schema, bytes, &view));
  view.CopyTo(row);
  return Status::OK();
}

uint64_t RowView::Fixed64(size_t column) const {
  uint64_t bits = 0;
  std::memcpy(&bits, fields_[column].data(), 8);
  return bits;  // as PutValue wrote it
}

int64_t RowView::Int64(size_t column) const {
  std::string_view field = fields_[column];
  uint64_t u = 0;
  GetVarint(&field, &u);  // checked when the row was parsed
  return UnZigZag(u);
}
double RowView::Double(size_t column) const { return std::bit_cast<double>(Fixed64(column)); }
bool RowView::Bool(size_t column) const { return fields_[column].front() == '\x01'; }
Timestamp RowView::TimestampOf(size_t column) const { return Timestamp{Int64(column)}; }

void RowView::CopyTo(Row* row) const {
  row->resize(fields_.size());
  for (size_t i = 0; i < fields_.size(); ++i) {
    Value& value = (*row)[i];
    if (IsNull(i)) {
      value = std::monostate{};
      continue;
    }
    switch (schema_->columns()[i].type) {
      case ColumnType::kInt64:
        value = Int64(i);
        break;
      case ColumnType::kTimestamp:
        value = TimestampOf(i);
        break;
      case ColumnType::kDouble:
        value = Double(i);
        break;
      case ColumnType::kBool:
        value = Bool(i);
        break;
      // Into the string the value already holds, reusing its buffer: a scan
      // copying into one Row allocates only for its first rows.
      case ColumnType::kString:
        if (auto* s = std::get_if<std::string>(&value)) s->assign(fields_[i]);
        else value.emplace<std::string>(fields_[i]);
        break;
      case ColumnType::kBytes:
        if (auto* b = std::get_if<Bytes>(&value)) b->data.assign(fields_[i]);
        else value.emplace<Bytes>().data.assign(fields_[i]);
        break;
    }
  }
}

}  // namespace spool
