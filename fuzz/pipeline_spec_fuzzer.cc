// Fuzz target: the pipeline spec (spool/stream/pipeline_spec.h) as the CLI
// and the server take it, parsed and then compiled against a store (names,
// expressions, types, the DAG, targets). Oracle, beyond "no crash, no hang,
// no undefined behaviour": a refused spec is InvalidArgument with a
// message; an accepted one prints as JSON that parses back to the same
// JSON; compiling never writes to the store.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "spool/storage/store.h"
#include "spool/stream/pipeline.h"
#include "spool/testing/mem_env.h"

namespace {

void Check(bool ok, const char* what, std::string_view input) {
  if (!ok) {
    std::fprintf(stderr, "pipeline_spec_fuzzer: invariant violated: %s\nspec: %.*s\n", what,
                 static_cast<int>(input.size()), input.data());
    std::abort();
  }
}

// One store for every input: its log in memory, its state in a temporary
// directory, and one table that specs may name as a lookup table.
spool::Store* TheStore() {
  static spool::Store* store = [] {
    static spool::MemEnv env;
    std::string dir = (std::filesystem::temp_directory_path() / "spool-spec-fuzz-XXXXXX").string();
    if (mkdtemp(dir.data()) == nullptr) std::abort();
    spool::StoreOptions options;
    options.env = &env;
    options.state_dir = dir + "/state";
    std::unique_ptr<spool::Store> s;
    if (!spool::Store::Open(options, "/store", &s).ok()) std::abort();
    spool::Schema schema;
    if (!spool::Schema::Make({{"id", spool::ColumnType::kInt64, false}, {"name", spool::ColumnType::kString, true}},
                             {"id"}, &schema)
             .ok()) {
      std::abort();
    }
    spool::TableId id;
    if (!spool::TableId::Parse("main.ref.customers", &id).ok()) std::abort();
    spool::Transaction txn("CREATE TABLE");
    txn.CreateTable(id, spool::TableKind::kStreamingTable, schema);
    if (!s->Commit(txn).ok()) std::abort();
    return s.release();
  }();
  return store;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  spool::PipelineSpec spec;
  spool::Status s = spool::ParsePipelineSpec(input, &spec);
  if (!s.ok()) {
    Check(s.IsInvalidArgument() && !s.message().empty(), "a refused spec is InvalidArgument with a message", input);
    return 0;
  }
  const std::string json = spool::PipelineSpecToJson(spec);
  spool::PipelineSpec again;
  Check(spool::ParsePipelineSpec(json, &again).ok(), "the printed spec parses", input);
  Check(spool::PipelineSpecToJson(again) == json, "the printed spec prints the same", input);
  spool::Store* store = TheStore();
  const uint64_t before = store->AvailableVersions().newest;
  std::unique_ptr<spool::Pipeline> pipeline;
  s = spool::Pipeline::Open(store, spec, &pipeline);
  Check(s.ok() || (s.IsInvalidArgument() && !s.message().empty()), "a spec that does not compile is InvalidArgument",
        input);
  Check(store->AvailableVersions().newest == before, "compiling writes nothing", input);
  return 0;
}
