// LocalPinStore: the pins in one JSON file (pin_store.hpp says how it is written). Every
// operation reads the file, changes it and writes it back under an exclusive flock(2) of
// "<path>.lock": the file is small (a definition per tool) and written only when a listing
// changes or an operator approves.
#pragma once

#include <functional>
#include <string>

#include "stores/pin_store.hpp"

namespace toolport::stores {

class LocalPinStore final : public PinStore {
public:
    explicit LocalPinStore(std::string path);

    std::string_view backend() const override { return "file"; }
    const std::string& path() const { return path_; }

    Task<PinSnapshot> load() override { co_return load_now(); }
    Task<std::string> version() override { co_return version_now(); }
    Task<bool> pin_if_absent(std::string source, PinRecord record) override;
    Task<void> set_pending(std::string source, PinRecord record) override;
    Task<void> drop_pending(std::string source, std::string key) override;
    Task<void> approve(std::string source, PinRecord record) override;
    Task<std::size_t> reset(std::string source, std::string key) override;

    // The same, without a loop (the CLI, and the server's first read before it serves).
    PinSnapshot load_now() const;
    std::string version_now() const;
    bool pin_if_absent_now(const std::string& source, const PinRecord& record);
    void set_pending_now(const std::string& source, const PinRecord& record);
    void drop_pending_now(const std::string& source, const std::string& key);
    void approve_now(const std::string& source, const PinRecord& record);
    std::size_t reset_now(const std::string& source, const std::string& key);

private:
    // Runs `change` on the file's contents under the lock and writes them back when it
    // returns true. Throws PinStoreError.
    void update(const std::function<bool(PinSnapshot&)>& change);

    std::string path_;
};

// The snapshot as the file's JSON, and back (entries that do not parse are skipped).
Json snapshot_to_json(const PinSnapshot& snapshot);
PinSnapshot snapshot_from_json(const Json& j);

}  // namespace toolport::stores
