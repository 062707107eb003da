// Fuzz target: the decoders of a table commit record and of a catalog entry
// (storage/commit_codec.h), and the row decoder over every row image a
// commit carries (storage/row_codec.h). The input is the bytes of a commit
// body; it is also decoded as a catalog entry (a TableDef buffer).
// Oracle, beyond "no crash, no hang, no undefined behaviour":
//  - a commit that decodes re-encodes with EncodeCommit to bytes that decode
//    to an equal record, and encoding that record again gives the same
//    bytes (one round reaches a fixed point);
//  - the decoder accepts a row change only with the images its kind needs:
//    insert a post and no pre, update both and a key, delete a pre and a
//    key (checked on the input's FlatBuffer itself, where absence is
//    visible);
//  - decoding with the `only_table` filter gives the same record with only
//    that table's changes;
//  - every row image decodes against the schemas of the commit's DDL (it
//    may be Corruption); a row that decodes fits its schema and round-trips;
//  - a catalog entry that decodes round-trips the same way.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "commit_codec.h"
#include "commit_generated.h"
#include "row_codec.h"

namespace {

using spool::CommitRecord;
using spool::RowChangeKind;
using spool::RowChangeRecord;
using spool::TableChangeSet;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "commit_decoder_fuzzer: invariant violated: %s\n", what);
    std::abort();
  }
}

bool SameChanges(const TableChangeSet& a, const TableChangeSet& b) {
  if (a.uid != b.uid || a.changes.size() != b.changes.size()) return false;
  for (size_t i = 0; i < a.changes.size(); ++i) {
    const RowChangeRecord& x = a.changes[i];
    const RowChangeRecord& y = b.changes[i];
    if (x.kind != y.kind || x.key != y.key || x.pre != y.pre || x.post != y.post) return false;
  }
  return true;
}

// The first field in which two records differ, ignoring the row changes;
// nullptr when none does.
const char* HeadDifference(const CommitRecord& a, const CommitRecord& b) {
  if (a.parameters_json != b.parameters_json) return "parameters";
  if (a.update_id != b.update_id) return "update_id";
  if (a.execution_time_us != b.execution_time_us) return "execution_time_us";
  if (a.metrics != b.metrics) return "metrics";
  if (a.ddl.size() != b.ddl.size()) return "ddl count";
  for (size_t i = 0; i < a.ddl.size(); ++i) {
    const spool::DdlRecord& x = a.ddl[i];
    const spool::DdlRecord& y = b.ddl[i];
    if (x.kind != y.kind || x.before.has_value() != y.before.has_value() ||
        x.after.has_value() != y.after.has_value()) {
      return "ddl kind";
    }
    for (const auto& [p, q] : {std::pair{&x.before, &y.before}, std::pair{&x.after, &y.after}}) {
      if (!p->has_value()) continue;
      const spool::TableInfo& t = **p;
      const spool::TableInfo& u = **q;
      if (t.id != u.id || t.uid != u.uid || t.kind != u.kind) return "ddl table id";
      if (t.schema != u.schema) return "ddl table schema";
      if (t.properties != u.properties) return "ddl table properties";
    }
  }
  if (a.checkpoints.size() != b.checkpoints.size()) return "checkpoint count";
  for (size_t i = 0; i < a.checkpoints.size(); ++i) {
    const spool::CheckpointRecord& x = a.checkpoints[i];
    const spool::CheckpointRecord& y = b.checkpoints[i];
    if (x.flow != y.flow || x.before != y.before || x.after != y.after) return "checkpoints";
  }
  return nullptr;
}

const char* Difference(const CommitRecord& a, const CommitRecord& b) {
  if (const char* head = HeadDifference(a, b)) return head;
  if (a.tables.size() != b.tables.size()) return "table change set count";
  for (size_t i = 0; i < a.tables.size(); ++i) {
    if (!SameChanges(a.tables[i], b.tables[i])) return "row changes";
  }
  return nullptr;
}

// The accepted input's row changes, read straight from its FlatBuffer.
void CheckImages(std::string_view bytes) {
  const spool::fb::CommitRecord* r = spool::fb::GetCommitRecord(bytes.data());
  if (r->tables() == nullptr) return;
  for (const spool::fb::TableChanges* t : *r->tables()) {
    if (t->changes() == nullptr) continue;
    for (const spool::fb::RowChange* c : *t->changes()) {
      const bool pre = c->pre() != nullptr, post = c->post() != nullptr;
      const bool key = c->key() != nullptr && c->key()->size() != 0;
      switch (c->kind()) {
        case static_cast<uint8_t>(RowChangeKind::kInsert):
          Check(post && !pre, "an insert without a post or with a pre");
          break;
        case static_cast<uint8_t>(RowChangeKind::kUpdate):
          Check(pre && post && key, "an update without pre, post and key");
          break;
        case static_cast<uint8_t>(RowChangeKind::kDelete):
          Check(pre && !post && key, "a delete without pre and key or with a post");
          break;
        default:
          Check(false, "a row change of unknown kind was accepted");
      }
    }
  }
}

void CheckDecodedKinds(const CommitRecord& c) {
  for (const TableChangeSet& t : c.tables) {
    for (const RowChangeRecord& r : t.changes) {
      switch (r.kind) {
        case RowChangeKind::kInsert:
          Check(r.pre.empty(), "a decoded insert has a pre-image");
          break;
        case RowChangeKind::kUpdate:
          Check(!r.key.empty(), "a decoded update has no key");
          break;
        case RowChangeKind::kDelete:
          Check(!r.key.empty() && r.post.empty(), "a decoded delete has no key or a post");
          break;
      }
    }
  }
}

// One row image against one schema: may fail, never crash; a row that
// decodes fits the schema, and encodes to bytes that decode to it again.
void CheckRow(const spool::Schema& schema, std::string_view bytes) {
  spool::Row row;
  if (!spool::DecodeRow(schema, bytes, &row).ok()) return;
  Check(schema.Validate(row).ok(), "DecodeRow returned a row that does not fit its schema");
  std::string encoded;
  spool::EncodeRow(schema, row, &encoded);
  spool::Row again;
  Check(spool::DecodeRow(schema, encoded, &again).ok(), "an encoded row does not decode");
  std::string twice;
  spool::EncodeRow(schema, again, &twice);
  Check(encoded == twice, "a row's encoding is not a fixed point");
  if (schema.has_key()) {
    std::string key;
    spool::EncodeKey(schema, row, &key);
  }
}

void CheckRows(const CommitRecord& c) {
  // The schemas of the tables this commit defines; a change set of another
  // table is tried against all of them (a few at most).
  struct Known {
    uint64_t uid;
    const spool::Schema* schema;
  };
  std::vector<Known> schemas;
  for (const spool::DdlRecord& d : c.ddl) {
    if (d.before) schemas.push_back({d.before->uid, &d.before->schema});
    if (d.after) schemas.push_back({d.after->uid, &d.after->schema});
  }
  constexpr size_t kMaxTries = 4;
  for (const TableChangeSet& t : c.tables) {
    std::vector<const spool::Schema*> tries;
    for (const Known& k : schemas) {
      if (k.uid == t.uid) tries.push_back(k.schema);
    }
    for (size_t i = 0; tries.empty() && i < schemas.size() && i < kMaxTries; ++i) tries.push_back(schemas[i].schema);
    for (const spool::Schema* schema : tries) {
      for (const RowChangeRecord& r : t.changes) {
        if (r.kind != RowChangeKind::kInsert) CheckRow(*schema, r.pre);
        if (r.kind != RowChangeKind::kDelete) CheckRow(*schema, r.post);
      }
    }
  }
}

void CheckOnlyTable(std::string_view bytes, const CommitRecord& full, uint64_t uid) {
  CommitRecord filtered;
  Check(spool::DecodeCommit(bytes, &filtered, uid).ok(), "a commit decodes, but not with an only_table filter");
  Check(HeadDifference(full, filtered) == nullptr, "the only_table filter changed more than the row changes");
  size_t j = 0;
  for (const TableChangeSet& t : full.tables) {
    if (t.uid != uid) continue;
    Check(j < filtered.tables.size() && SameChanges(t, filtered.tables[j]), "the only_table filter lost changes");
    ++j;
  }
  Check(j == filtered.tables.size(), "the only_table filter kept another table's changes");
}

void FuzzCommit(std::string_view bytes) {
  CommitRecord record;
  if (!spool::DecodeCommit(bytes, &record).ok()) return;
  CheckImages(bytes);
  CheckDecodedKinds(record);
  const std::string once = spool::EncodeCommit(record);
  CommitRecord again;
  Check(spool::DecodeCommit(once, &again).ok(), "a re-encoded commit does not decode");
  if (const char* field = Difference(record, again)) {
    std::fprintf(stderr, "commit_decoder_fuzzer: a re-encoded commit decodes with another %s\n", field);
    Check(false, "a re-encoded commit decodes to another record");
  }
  Check(spool::EncodeCommit(again) == once, "encode(decode(x)) is not a fixed point");
  if (!record.tables.empty()) CheckOnlyTable(bytes, record, record.tables.front().uid);
  CheckOnlyTable(bytes, record, record.tables.empty() ? 0 : record.tables.back().uid + 1);
  CheckRows(record);
}

void FuzzTableInfo(std::string_view bytes) {
  spool::TableInfo table;
  if (!spool::DecodeTableInfo(bytes, &table).ok()) return;
  const std::string once = spool::EncodeTableInfo(table);
  spool::TableInfo again;
  Check(spool::DecodeTableInfo(once, &again).ok(), "a re-encoded catalog entry does not decode");
  Check(again.id == table.id && again.uid == table.uid && again.kind == table.kind,
        "a re-encoded catalog entry decodes with another id");
  Check(again.schema == table.schema, "a re-encoded catalog entry decodes with another schema");
  Check(again.properties == table.properties, "a re-encoded catalog entry decodes with other properties");
  Check(spool::EncodeTableInfo(again) == once, "a catalog entry's encoding is not a fixed point");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A copy, so the FlatBuffer is as aligned as one read from a log record.
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  FuzzCommit(bytes);
  FuzzTableInfo(bytes);
  return 0;
}
