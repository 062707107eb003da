#include "commit_codec.h"

#include <cstring>

#include "commit_generated.h"
#include "fb_fields.h"
#include "invariant.h"
#include "varint.h"

namespace spool {
namespace {

using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

// Strings go in with their length (CreateString of a std::string), never
// as C strings: a value may hold NUL bytes.
Offset<fb::TableDef> BuildTableDef(FlatBufferBuilder& fbb, const TableInfo& t) {
  std::vector<Offset<fb::ColumnDef>> columns;
  for (const Column& c : t.schema.columns()) {
    columns.push_back(fb::CreateColumnDef(fbb, fbb.CreateString(c.name), static_cast<uint8_t>(c.type), c.nullable));
  }
  std::vector<uint32_t> key;
  for (size_t index : t.schema.key_columns()) key.push_back(static_cast<uint32_t>(index));
  std::vector<Offset<fb::PropertyDef>> properties;
  for (const auto& [k, v] : t.properties) {
    properties.push_back(fb::CreatePropertyDef(fbb, fbb.CreateString(k), fbb.CreateString(v)));
  }
  return fb::CreateTableDef(fbb, t.uid, fbb.CreateString(t.id.catalog), fbb.CreateString(t.id.schema),
                            fbb.CreateString(t.id.table), static_cast<uint8_t>(t.kind), fbb.CreateVector(columns),
                            fbb.CreateVector(key), fbb.CreateVector(properties));
}

Offset<flatbuffers::Vector<uint8_t>> ByteVector(FlatBufferBuilder& fbb, const std::string& s) {
  return fbb.CreateVector(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

// The packed encoding of a table's row changes (commit.fbs, TableChanges):
// sized exactly first, then written in place into the builder.
size_t PackedBytes(const RowChangeRecord& r) {
  size_t bytes = 1 + VarintLength(r.key.size()) + r.key.size();
  if (r.kind != RowChangeKind::kInsert)
    bytes += VarintLength(r.pre_version) + VarintLength(r.pre.size()) + r.pre.size();
  if (r.kind != RowChangeKind::kDelete) bytes += VarintLength(r.post.size()) + r.post.size();
  return bytes;
}

uint8_t* PutPackedBytes(uint8_t* out, const std::string& bytes) {
  out = EncodeVarint(out, bytes.size());
  std::memcpy(out, bytes.data(), bytes.size());
  return out + bytes.size();
}

Offset<flatbuffers::Vector<uint8_t>> PackChanges(FlatBufferBuilder& fbb, const std::vector<RowChangeRecord>& changes) {
  size_t bytes = 0;
  for (const RowChangeRecord& r : changes) bytes += PackedBytes(r);
  uint8_t* out = nullptr;
  auto vector = fbb.CreateUninitializedVector(bytes, &out);
  const uint8_t* end = out + bytes;
  for (const RowChangeRecord& r : changes) {
    *out++ = static_cast<uint8_t>(r.kind);
    out = PutPackedBytes(out, r.key);
    if (r.kind != RowChangeKind::kInsert) {
      out = EncodeVarint(out, r.pre_version);
      out = PutPackedBytes(out, r.pre);
    }
    if (r.kind != RowChangeKind::kDelete) out = PutPackedBytes(out, r.post);
  }
  SPOOL_CHECK(out == end, "a packed run fills exactly the bytes it measured");
  return vector;
}

Status TruncatedChange() { return Status::Corruption("commit has a truncated row change"); }

Status GetPackedBytes(std::string_view* in, std::string* bytes) {
  uint64_t n = 0;
  if (!GetVarint(in, &n) || n > in->size()) return TruncatedChange();
  bytes->assign(in->data(), n);
  in->remove_prefix(n);
  return Status::OK();
}

// Reads a packed run into `changes` (appended), checking each change as the
// RowChange tables are checked.
Status UnpackChanges(std::string_view in, std::vector<RowChangeRecord>* changes) {
  while (!in.empty()) {
    const auto kind = static_cast<uint8_t>(in.front());
    in.remove_prefix(1);
    if (kind < static_cast<uint8_t>(RowChangeKind::kInsert) || kind > static_cast<uint8_t>(RowChangeKind::kDelete)) {
      return Status::Corruption("commit has a row change of unknown kind");
    }
    RowChangeRecord& r = changes->emplace_back();
    r.kind = static_cast<RowChangeKind>(kind);
    SPOOL_RETURN_IF_ERROR(GetPackedBytes(&in, &r.key));
    if (r.kind != RowChangeKind::kInsert) {
      if (r.key.empty()) return Status::Corruption("commit has a row change without the images or key its kind needs");
      if (!GetVarint(&in, &r.pre_version)) return TruncatedChange();
      SPOOL_RETURN_IF_ERROR(GetPackedBytes(&in, &r.pre));
    }
    if (r.kind != RowChangeKind::kDelete) SPOOL_RETURN_IF_ERROR(GetPackedBytes(&in, &r.post));
  }
  return Status::OK();
}

Status ReadTableDef(const fb::TableDef* def, TableInfo* t) {
  if (def == nullptr) return Status::Corruption("table definition is missing");
  const std::string name = Str(def->catalog()) + "." + Str(def->schema_name()) + "." + Str(def->name());
  Status s = TableId::Parse(name, &t->id);
  if (!s.ok()) return Status::Corruption("table definition has a bad name: " + std::string(s.message()));
  t->uid = def->uid();
  if (def->kind() < static_cast<uint8_t>(TableKind::kStreamingTable) ||
      def->kind() > static_cast<uint8_t>(TableKind::kInternalState)) {
    return Status::Corruption("table " + name + " has an unknown kind");
  }
  t->kind = static_cast<TableKind>(def->kind());
  std::vector<Column> columns;
  if (def->columns() != nullptr) {
    for (const fb::ColumnDef* c : *def->columns()) {
      if (c->type() < static_cast<uint8_t>(ColumnType::kInt64) ||
          c->type() > static_cast<uint8_t>(ColumnType::kBytes)) {
        return Status::Corruption("table " + name + " has a column of unknown type");
      }
      columns.push_back(Column{Str(c->name()), static_cast<ColumnType>(c->type()), c->nullable()});
    }
  }
  std::vector<std::string> key;
  if (def->primary_key() != nullptr) {
    for (uint32_t index : *def->primary_key()) {
      if (index >= columns.size()) return Status::Corruption("table " + name + " has a key naming a missing column");
      key.push_back(columns[index].name);
    }
  }
  s = Schema::Make(std::move(columns), key, &t->schema);
  if (!s.ok()) return Status::Corruption("table " + name + " has a bad schema: " + std::string(s.message()));
  t->properties.clear();
  if (def->properties() != nullptr) {
    for (const fb::PropertyDef* p : *def->properties()) t->properties[Str(p->key())] = Str(p->value());
  }
  return Status::OK();
}

Status ReadOptionalTableDef(const fb::TableDef* def, std::optional<TableInfo>* out) {
  if (def == nullptr) return Status::OK();
  out->emplace();
  return ReadTableDef(def, &**out);
}

}  // namespace

std::string EncodeCommit(const CommitRecord& c) {
  // Sized up front: a builder that grows by doubling copies itself each time.
  size_t estimate = 1024 + c.parameters_json.size();
  for (const TableChangeSet& t : c.tables) {
    estimate += 32;
    for (const RowChangeRecord& r : t.changes) estimate += PackedBytes(r);
  }
  for (const CheckpointRecord& k : c.checkpoints) {
    estimate += 64 + k.flow.size() + (k.before ? k.before->size() : 0) + (k.after ? k.after->size() : 0);
  }
  FlatBufferBuilder fbb(estimate);
  std::vector<Offset<fb::Metric>> metrics;
  for (const auto& [name, value] : c.metrics) metrics.push_back(fb::CreateMetric(fbb, fbb.CreateString(name), value));
  std::vector<Offset<fb::DdlChange>> ddl;
  for (const DdlRecord& d : c.ddl) {
    auto before = d.before ? BuildTableDef(fbb, *d.before) : 0;
    auto after = d.after ? BuildTableDef(fbb, *d.after) : 0;
    ddl.push_back(fb::CreateDdlChange(fbb, static_cast<uint8_t>(d.kind), before, after));
  }
  std::vector<Offset<fb::TableChanges>> tables;
  for (const TableChangeSet& t : c.tables) {
    tables.push_back(fb::CreateTableChanges(fbb, t.uid, 0, PackChanges(fbb, t.changes)));
  }
  std::vector<Offset<fb::CheckpointChange>> checkpoints;
  for (const CheckpointRecord& k : c.checkpoints) {
    auto flow = fbb.CreateString(k.flow);
    auto before = k.before ? ByteVector(fbb, *k.before) : 0;
    auto after = k.after ? ByteVector(fbb, *k.after) : 0;
    checkpoints.push_back(
        fb::CreateCheckpointChange(fbb, flow, before, after, k.before.has_value(), k.after.has_value()));
  }
  auto record = fb::CreateCommitRecord(fbb, fbb.CreateString(c.parameters_json), fbb.CreateString(c.update_id),
                                       c.execution_time_us, fbb.CreateVector(metrics), fbb.CreateVector(ddl),
                                       fbb.CreateVector(tables), fbb.CreateVector(checkpoints));
  fbb.Finish(record, fb::CommitRecordIdentifier());
  return std::string(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize());
}

namespace {

// FlatBuffers reads scalars in place: bytes at an unaligned address (an
// LMDB value) are copied into `copy` first.
std::string_view Aligned(std::string_view bytes, std::string* copy) {
  if (reinterpret_cast<uintptr_t>(bytes.data()) % alignof(uint64_t) == 0) return bytes;
  copy->assign(bytes);
  return *copy;
}

// A DDL change, checked: a known kind with the table definitions it needs,
// of one table.
Status ReadDdlChange(const fb::DdlChange& d, DdlRecord* ddl) {
  if (d.kind() < static_cast<uint8_t>(DdlKind::kCreate) || d.kind() > static_cast<uint8_t>(DdlKind::kDrop)) {
    return Status::Corruption("commit has a DDL change of unknown kind");
  }
  ddl->kind = static_cast<DdlKind>(d.kind());
  SPOOL_RETURN_IF_ERROR(ReadOptionalTableDef(d.before(), &ddl->before));
  SPOOL_RETURN_IF_ERROR(ReadOptionalTableDef(d.after(), &ddl->after));
  const bool wants_before = ddl->kind != DdlKind::kCreate;
  const bool wants_after = ddl->kind != DdlKind::kDrop;
  if (ddl->before.has_value() != wants_before || ddl->after.has_value() != wants_after) {
    return Status::Corruption("commit has a DDL change without the table definitions its kind needs");
  }
  if (ddl->before && ddl->after && ddl->before->uid != ddl->after->uid) {
    return Status::Corruption("commit alters a table into another table");
  }
  return Status::OK();
}

// Row changes in the RowChange tables (the encoding before the packed one),
// appended to `*out`, each checked as UnpackChanges checks a packed one.
Status ReadRowChanges(const flatbuffers::Vector<flatbuffers::Offset<fb::RowChange>>& changes,
                      std::vector<RowChangeRecord>* out) {
  const flatbuffers::uoffset_t count = changes.size();
  out->reserve(count);
  for (flatbuffers::uoffset_t i = 0; i < count; ++i) {
    const fb::RowChange* rc = changes.Get(i);
    if (rc->kind() < static_cast<uint8_t>(RowChangeKind::kInsert) ||
        rc->kind() > static_cast<uint8_t>(RowChangeKind::kDelete)) {
      return Status::Corruption("commit has a row change of unknown kind");
    }
    const auto kind = static_cast<RowChangeKind>(rc->kind());
    const bool has_pre = rc->pre() != nullptr, has_post = rc->post() != nullptr;
    if (has_pre != (kind != RowChangeKind::kInsert) || has_post != (kind != RowChangeKind::kDelete) ||
        (kind != RowChangeKind::kInsert && (rc->key() == nullptr || rc->key()->size() == 0))) {
      return Status::Corruption("commit has a row change without the images or key its kind needs");
    }
    out->push_back(RowChangeRecord{kind, Str(rc->key()), Str(rc->pre()), Str(rc->post()), rc->pre_version()});
  }
  return Status::OK();
}

// One table's row changes, in whichever of the two encodings it has.
Status ReadTableChanges(const fb::TableChanges& t, TableChangeSet* set) {
  set->uid = t.uid();
  if (t.changes() != nullptr && t.packed() != nullptr) {
    return Status::Corruption("commit has a table's row changes in both encodings");
  }
  if (const auto* packed = t.packed(); packed != nullptr) {
    SPOOL_RETURN_IF_ERROR(
        UnpackChanges(std::string_view(reinterpret_cast<const char*>(packed->data()), packed->size()), &set->changes));
  }
  if (const auto* changes = t.changes(); changes != nullptr) return ReadRowChanges(*changes, &set->changes);
  return Status::OK();
}

}  // namespace

Status DecodeCommit(std::string_view body, CommitRecord* c, std::optional<uint64_t> only_table) {
  std::string copy;
  body = Aligned(body, &copy);
  const auto* bytes = reinterpret_cast<const uint8_t*>(body.data());
  flatbuffers::Verifier verifier(bytes, body.size());
  if (!fb::VerifyCommitRecordBuffer(verifier)) return Status::Corruption("commit record does not verify");
  const fb::CommitRecord* r = fb::GetCommitRecord(bytes);
  *c = CommitRecord{};
  c->parameters_json = Str(r->parameters());
  c->update_id = Str(r->update_id());
  c->execution_time_us = r->execution_time_us();
  if (r->metrics() != nullptr) {
    for (const fb::Metric* m : *r->metrics()) c->metrics[Str(m->name())] = m->value();
  }
  if (r->ddl() != nullptr) {
    for (const fb::DdlChange* d : *r->ddl()) {
      DdlRecord ddl;
      SPOOL_RETURN_IF_ERROR(ReadDdlChange(*d, &ddl));
      c->ddl.push_back(std::move(ddl));
    }
  }
  if (r->tables() != nullptr) {
    for (const fb::TableChanges* t : *r->tables()) {
      if (only_table && t->uid() != *only_table) continue;
      TableChangeSet set;
      SPOOL_RETURN_IF_ERROR(ReadTableChanges(*t, &set));
      c->tables.push_back(std::move(set));
    }
  }
  if (r->checkpoints() != nullptr) {
    for (const fb::CheckpointChange* k : *r->checkpoints()) {
      CheckpointRecord record{Str(k->flow()), {}, {}};
      if (k->had_before()) record.before = Str(k->before());
      if (k->has_after()) record.after = Str(k->after());
      if (record.flow.empty()) return Status::Corruption("commit has a checkpoint without a flow name");
      c->checkpoints.push_back(std::move(record));
    }
  }
  return Status::OK();
}

std::string EncodeTableInfo(const TableInfo& table) {
  FlatBufferBuilder fbb(256);
  fbb.Finish(BuildTableDef(fbb, table));
  return std::string(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize());
}

Status DecodeTableInfo(std::string_view bytes, TableInfo* table) {
  std::string copy;
  bytes = Aligned(bytes, &copy);
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  flatbuffers::Verifier verifier(data, bytes.size());
  if (!verifier.VerifyBuffer<fb::TableDef>(nullptr)) return Status::Corruption("catalog entry does not verify");
  return ReadTableDef(flatbuffers::GetRoot<fb::TableDef>(data), table);
}

std::string KeylessRowId(uint64_t version, uint32_t index) {
  std::string id(12, '\0');
  for (size_t i = 0; i < 8; ++i) id[i] = static_cast<char>(version >> (56 - 8 * i));
  for (size_t i = 0; i < 4; ++i) id[8 + i] = static_cast<char>(index >> (24 - 8 * i));
  return id;
}

}  // namespace spool
