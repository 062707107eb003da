// Store: the installed class, each call handed to StoreImpl (store_impl.h).
#include "spool/storage/store.h"
#include "store_impl.h"

namespace spool {

Store::Store(std::unique_ptr<StoreImpl> impl) : impl_(std::move(impl)) {}

Store::~Store() = default;

Status Store::Open(const StoreOptions& options, const std::string& dir, std::unique_ptr<Store>* store) {
  std::unique_ptr<StoreImpl> impl;
  SPOOL_RETURN_IF_ERROR(StoreImpl::Open(options, dir, &impl));
  store->reset(new Store(std::move(impl)));
  return Status::OK();
}

const std::string& Store::dir() const { return impl_->dir(); }
Log* Store::log() { return impl_->log(); }
EventLog* Store::events() { return impl_->events(); }
const StoreOptions& Store::options() const { return impl_->options(); }
const std::string& Store::rebuilt_from() const { return impl_->rebuilt_from(); }

Status Store::Commit(const Transaction& txn, CommitResult* result) {
  SPOOL_RETURN_IF_ERROR(impl_->Writable("commit"));
  return impl_->Commit(txn, result);
}
Status Store::CommitAsync(const Transaction& txn, PendingCommit* pending) {
  SPOOL_RETURN_IF_ERROR(impl_->Writable("commit"));
  return impl_->CommitAsync(txn, pending);
}
Status Store::Wait(PendingCommit* pending, CommitResult* result) { return impl_->Wait(pending, result); }

std::vector<TableInfo> Store::ListTables() { return impl_->ListTables(); }
Status Store::GetTable(const TableId& id, TableInfo* table) { return impl_->GetTable(id, table); }

Status Store::Read(const TableId& id, const ReadOptions& options, const std::function<bool(const Row&)>& visit,
                   TableInfo* table, uint64_t* version_read) {
  return impl_->Read(id, options, visit, table, version_read);
}
Status Store::Scan(const TableId& id, const ReadOptions& options, const std::function<bool(const RowView&)>& visit,
                   TableInfo* table, uint64_t* version_read) {
  return impl_->Scan(id, options, visit, table, version_read);
}
Status Store::Get(const TableId& id, const Row& key, Row* row, bool* found) { return impl_->Get(id, key, row, found); }
uint64_t Store::LastChangeBound(const TableInfo& table) { return impl_->LastChangeBound(table); }

Status Store::GetCheckpoint(const std::string& flow, std::string* data, bool* found) {
  return impl_->GetCheckpoint(flow, data, found);
}
Status Store::GetCheckpointAt(const std::string& flow, uint64_t version, std::string* data, bool* found) {
  return impl_->GetCheckpointAt(flow, version, data, found);
}

Status Store::History(const TableId& id, std::vector<HistoryEntry>* history, uint64_t limit, uint64_t from) {
  return impl_->History(id, history, limit, from);
}
Status Store::Changes(const TableId& id, uint64_t from, uint64_t to, const std::function<bool(const ChangeRow&)>& visit,
                      TableInfo* table) {
  return impl_->Changes(id, from, to, visit, table);
}

Status Store::Restore(const TableId& id, uint64_t version, CommitResult* result) {
  SPOOL_RETURN_IF_ERROR(impl_->Writable("restore a table"));
  return impl_->Restore(id, version, result);
}
Status Store::RestoreTables(const std::vector<TableId>& tables, const std::vector<std::string>& flows, uint64_t version,
                            CommitResult* result, std::string_view update_id) {
  SPOOL_RETURN_IF_ERROR(impl_->Writable("restore tables"));
  return impl_->RestoreTables(tables, flows, version, result, update_id);
}

Status Store::RewindTo(uint64_t version, LogPosition* head, std::string_view update_id) {
  SPOOL_RETURN_IF_ERROR(impl_->Writable("rewind"));
  return impl_->RewindTo(version, head, update_id);
}
Status Store::CanRewindTo(uint64_t version) { return impl_->CanRewindTo(version); }
bool Store::OnHistory(const LogPosition& position) { return impl_->OnHistory(position); }
Status Store::ChangesBeyond(uint64_t version, const std::set<TableId>& owned, std::vector<std::string>* others,
                            std::vector<std::string>* recreated) {
  return impl_->ChangesBeyond(version, owned, others, recreated);
}

VersionRange Store::AvailableVersions() { return impl_->AvailableVersions(); }
uint64_t Store::CommitsAfter(uint64_t version) { return impl_->CommitsAfter(version); }

Status Store::ListArchivedCuts(std::vector<ArchivedCut>* cuts) { return impl_->ListArchivedCuts(cuts); }
Status Store::ReadArchived(const ArchivedCut& cut, const TableId& id, uint64_t version,
                           const std::function<bool(const Row&)>& visit, TableInfo* table) {
  return impl_->ReadArchived(cut, id, version, visit, table);
}

Status Store::TakeSnapshot(SnapshotInfo* info) {
  SPOOL_RETURN_IF_ERROR(impl_->Writable("take a snapshot"));
  return impl_->TakeSnapshot(info);
}
Status Store::TakeSnapshot(SnapshotInfo* info, const std::function<void(uint64_t entries)>& on_progress) {
  SPOOL_RETURN_IF_ERROR(impl_->Writable("take a snapshot"));
  return impl_->TakeSnapshot(info, on_progress);
}
Status Store::ListSnapshots(std::vector<SnapshotInfo>* snapshots) { return impl_->ListSnapshots(snapshots); }
Status Store::SaveStateCopy() {
  SPOOL_RETURN_IF_ERROR(impl_->Writable("save a state copy"));
  return impl_->SaveStateCopy();
}

std::unique_ptr<VersionPin> Store::PinVersion(uint64_t version) { return impl_->PinVersion(version); }
Status Store::AddPin(const std::string& name, uint64_t version) {
  SPOOL_RETURN_IF_ERROR(impl_->Writable("add a pin"));
  return impl_->AddPin(name, version);
}
Status Store::RemovePin(const std::string& name) {
  SPOOL_RETURN_IF_ERROR(impl_->Writable("remove a pin"));
  return impl_->RemovePin(name);
}
std::vector<std::pair<std::string, uint64_t>> Store::Pins() { return impl_->Pins(); }

Status Store::Vacuum(const VacuumOptions& options, VacuumReport* report) {
  SPOOL_RETURN_IF_ERROR(impl_->Writable("vacuum"));
  return impl_->Vacuum(options, report);
}

Status Store::ClaimUpdate(const std::string& update_id, std::unique_ptr<UpdateClaim>* claim) {
  SPOOL_RETURN_IF_ERROR(impl_->Writable("run an update"));
  return impl_->ClaimUpdate(update_id, claim);
}
std::string Store::RunningUpdate() { return impl_->RunningUpdate(); }

Status Store::FlushState() {
  SPOOL_RETURN_IF_ERROR(impl_->Writable("flush the state"));
  return impl_->FlushState();
}
StoreStats Store::Stats() { return impl_->Stats(); }

}  // namespace spool
