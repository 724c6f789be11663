// LocalPinStore: the pins in one JSON file (pin_store.hpp says how it is written). Every
// operation reads the file, changes it and writes it back under an exclusive flock(2) of
// "<path>.lock": the file is small (a definition per tool) and written only when a listing
// changes or an operator approves.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <type_traits>
#include <string>

#include "async/worker_pool.hpp"
#include "stores/pin_store.hpp"

namespace toolport::stores {

class LocalPinStore final : public PinStore {
public:
    // With `loop`, the async operations read and write the file on a thread of their own
    // and resume on `loop` (an fsync under a busy disk never holds the server); without
    // it they run inline (the CLI, tests on a manual executor).
    explicit LocalPinStore(std::string path, Executor* loop = nullptr);

    std::string_view backend() const override { return "file"; }
    const std::string& path() const { return path_; }

    Task<PinSnapshot> load() override;
    Task<std::string> version() override;
    Task<std::size_t> record_listing(std::string source, ListingWrites writes) override;
    Task<RecordedListing> record_listing_from(std::string source, ListingWrites writes,
                                              std::string expected_version) override;
    Task<void> approve(std::string source, PinRecord record) override;
    Task<std::size_t> reset(std::string source, std::string key) override;

    // The same, without a loop (the CLI, and the server's first read before it serves).
    PinSnapshot load_now() const;
    std::string version_now() const;
    std::size_t record_listing_now(const std::string& source, const ListingWrites& writes);
    // A run of listing writes through this store, each by a caller that knew the file at
    // `from` (a guard issues its next write before the last one ended: one per kind of a
    // listing): the file reached `to` through them alone.
    struct WriteChain {
        std::mutex mutex;
        std::string from, to;
    };
    // `chain`: the run this write may continue (default: this store's own).
    RecordedListing record_listing_from_now(const std::string& source, const ListingWrites& writes,
                                            const std::string& expected_version = {}, WriteChain* chain = nullptr);
    void approve_now(const std::string& source, const PinRecord& record);
    std::size_t reset_now(const std::string& source, const std::string& key);

private:
    // Runs `change` on the file's contents under the lock and writes them back when it
    // returns true. With `expected` (a version the caller read), `after` is set to the
    // version after the change (still under the lock) when the file was at `expected`, or
    // had moved from it through `chain` alone; else left empty. Throws PinStoreError.
    void update(const std::function<bool(PinSnapshot&)>& change, const std::string* expected = nullptr,
                WriteChain* chain = nullptr, std::string* after = nullptr);
    // Runs fn(store of this path) inline or on the worker (see the constructor).
    template <typename Fn>
    auto on_file(Fn fn) -> Task<std::invoke_result_t<Fn&, LocalPinStore&>>;

    std::string path_;
    Executor* loop_ = nullptr;
    std::shared_ptr<WorkerPool> worker_;
    std::shared_ptr<WriteChain> chain_ = std::make_shared<WriteChain>();
};

// The snapshot as the file's JSON, and back (entries that do not parse are skipped).
Json snapshot_to_json(const PinSnapshot& snapshot);
PinSnapshot snapshot_from_json(const Json& j);

}  // namespace toolport::stores
