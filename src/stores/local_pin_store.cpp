#include "stores/local_pin_store.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "util/state_dir.hpp"

namespace toolport::stores {

namespace fs = std::filesystem;

namespace {

std::string text_of(const Json& j, const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

PinMap map_from_json(const Json& j) {
    PinMap out;
    if (!j.is_object()) return out;
    for (const auto& [key, value] : j.items()) {
        if (auto record = PinRecord::from_json(value); record && record->key() == key) out.emplace(key, *record);
    }
    return out;
}

Json map_to_json(const PinMap& map) {
    Json out = Json::object();
    for (const auto& [key, record] : map) out[key] = record.to_json();
    return out;
}

// An open descriptor closed on every path.
struct Fd {
    int fd = -1;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

void write_all(int fd, const std::string& text, const std::string& path) {
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw PinStoreError(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
        done += static_cast<std::size_t>(n);
    }
}

}  // namespace

Json PinRecord::to_json() const {
    Json j = {{"kind", kind},
              {"name", name},
              {"digest", digest},
              {"body_digest", body_digest},
              {"definition", definition}};
    if (!time.empty()) j["time"] = time;
    if (!by.empty()) j["by"] = by;
    if (!change.empty()) j["change"] = change;
    return j;
}

std::optional<PinRecord> PinRecord::from_json(const Json& j) {
    if (!j.is_object()) return std::nullopt;
    PinRecord r;
    r.kind = text_of(j, "kind");
    r.name = text_of(j, "name");
    r.digest = text_of(j, "digest");
    r.body_digest = text_of(j, "body_digest");
    if (auto it = j.find("definition"); it != j.end()) r.definition = *it;
    r.time = text_of(j, "time");
    r.by = text_of(j, "by");
    r.change = text_of(j, "change");
    if (r.kind.empty() || r.name.empty() || r.digest.empty()) return std::nullopt;
    return r;
}

std::string default_pins_path() { return util::state_path("pins.json"); }

Json snapshot_to_json(const PinSnapshot& snapshot) {
    Json sources = Json::object();
    for (const auto& [source, pins] : snapshot) {
        if (pins.pinned.empty() && pins.pending.empty()) continue;
        sources[source] = {{"pinned", map_to_json(pins.pinned)}, {"pending", map_to_json(pins.pending)}};
    }
    return {{"version", 1}, {"sources", std::move(sources)}};
}

PinSnapshot snapshot_from_json(const Json& j) {
    PinSnapshot out;
    if (!j.is_object() || !j.contains("sources") || !j["sources"].is_object()) return out;
    for (const auto& [source, pins] : j["sources"].items()) {
        if (!pins.is_object()) continue;
        SourcePins sp;
        if (pins.contains("pinned")) sp.pinned = map_from_json(pins["pinned"]);
        if (pins.contains("pending")) sp.pending = map_from_json(pins["pending"]);
        out.emplace(source, std::move(sp));
    }
    return out;
}

LocalPinStore::LocalPinStore(std::string path, Executor* loop)
    : path_(std::move(path)), loop_(loop), worker_(loop ? std::make_shared<WorkerPool>(1) : nullptr) {}

template <typename Fn>
auto LocalPinStore::on_file(Fn fn) -> Task<std::invoke_result_t<Fn&, LocalPinStore&>> {
    if (!loop_) co_return fn(*this);
    // One thread, so this process's writes keep their order. The work opens the same path
    // through a store of its own: nothing of this one, which may be gone before it ends.
    co_return co_await worker_->run(*loop_, [path = path_, fn = std::move(fn)]() mutable {
        LocalPinStore file(path);
        return fn(file);
    });
}

PinSnapshot LocalPinStore::load_now() const {
    std::ifstream in(path_, std::ios::binary);
    if (!in) return {};  // no pins yet
    std::stringstream text;
    text << in.rdbuf();
    Json j = Json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) {
        // Never silently start over: an unreadable file would make every tool "first sight".
        throw PinStoreError(fmt::format("the pins file {} is not JSON; move it aside to start over", path_));
    }
    return snapshot_from_json(j);
}

std::string LocalPinStore::version_now() const {
    struct stat st {};
    if (::stat(path_.c_str(), &st) != 0) return "none";
    return fmt::format("{}:{}:{}.{}", st.st_ino, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
}

void LocalPinStore::update(const std::function<bool(PinSnapshot&)>& change, const std::string* expected,
                           WriteChain* chain, std::string* after) {
    const fs::path path(path_);
    std::error_code ec;
    if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
    Fd lock{::open((path_ + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600)};
    if (lock.fd < 0) throw PinStoreError(fmt::format("cannot open {}.lock: {}", path_, std::strerror(errno)));
    while (::flock(lock.fd, LOCK_EX) != 0) {
        if (errno != EINTR) throw PinStoreError(fmt::format("cannot lock {}: {}", path_, std::strerror(errno)));
    }
    // Under the lock: whether anybody else wrote since the caller read the file.
    std::unique_lock<std::mutex> chain_lock;
    if (chain) chain_lock = std::unique_lock<std::mutex>(chain->mutex);
    bool as_expected = false;
    if (expected && !expected->empty()) {
        const std::string before = version_now();
        as_expected = before == *expected ||
                      (chain && !chain->to.empty() && chain->from == *expected && chain->to == before);
    }
    const auto written = [&] {
        if (!as_expected) return;
        *after = version_now();
        if (chain) {
            chain->from = *expected;
            chain->to = *after;
        }
    };
    if (chain && !as_expected) {
        chain->from.clear();
        chain->to.clear();
    }
    PinSnapshot snapshot = load_now();
    if (!change(snapshot)) {
        written();
        return;
    }
    const std::string text = snapshot_to_json(snapshot).dump(2) + "\n";
    const std::string temp = fmt::format("{}.tmp.{}", path_, ::getpid());
    {
        Fd out{::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)};
        if (out.fd < 0) throw PinStoreError(fmt::format("cannot create {}: {}", temp, std::strerror(errno)));
        write_all(out.fd, text, temp);
        if (::fsync(out.fd) != 0) throw PinStoreError(fmt::format("cannot sync {}: {}", temp, std::strerror(errno)));
    }
    if (::rename(temp.c_str(), path_.c_str()) != 0) {
        const int error = errno;
        ::unlink(temp.c_str());
        throw PinStoreError(fmt::format("cannot replace {}: {}", path_, std::strerror(error)));
    }
    // The rename itself is durable only once the directory is.
    const std::string dir = path.has_parent_path() ? path.parent_path().string() : ".";
    Fd d{::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
    if (d.fd >= 0) ::fsync(d.fd);
    written();  // still under the lock
}

std::size_t LocalPinStore::record_listing_now(const std::string& source, const ListingWrites& writes) {
    return record_listing_from_now(source, writes).lost;
}

PinStore::RecordedListing LocalPinStore::record_listing_from_now(const std::string& source, const ListingWrites& writes,
                                                                 const std::string& expected_version, WriteChain* chain) {
    RecordedListing recorded;
    std::size_t& lost = recorded.lost;
    update(
        [&](PinSnapshot& s) {
            bool changed = false;
            auto& pins = s[source];
            for (const auto& record : writes.first_sights) {
                if (pins.pinned.emplace(record.key(), record).second) {
                    changed = true;
                } else {
                    ++lost;
                }
            }
            for (const auto& record : writes.pending) {
                auto it = pins.pending.find(record.key());
                if (it != pins.pending.end() && it->second.digest == record.digest) continue;
                pins.pending[record.key()] = record;
                changed = true;
            }
            for (const auto& key : writes.settled) changed = pins.pending.erase(key) > 0 || changed;
            return changed;
        },
        &expected_version, chain ? chain : chain_.get(), &recorded.version_after);
    if (lost > 0 && !recorded.version_after.empty()) {
        // Somebody else's pin stood: the caller's copy is not what the file holds, so no
        // version for it, and no later write continues this run.
        WriteChain& run = chain ? *chain : *chain_;
        std::lock_guard<std::mutex> hold(run.mutex);
        run.from.clear();
        run.to.clear();
        recorded.version_after.clear();
    }
    return recorded;
}

void LocalPinStore::approve_now(const std::string& source, const PinRecord& record) {
    update([&](PinSnapshot& s) {
        auto& pins = s[source];
        pins.pinned[record.key()] = record;
        pins.pending.erase(record.key());
        return true;
    });
}

std::size_t LocalPinStore::reset_now(const std::string& source, const std::string& key) {
    std::size_t gone = 0;
    update([&](PinSnapshot& s) {
        auto it = s.find(source);
        if (it == s.end()) return false;
        if (key.empty()) {
            gone = it->second.pinned.size() + it->second.pending.size();
            s.erase(it);
        } else {
            gone = it->second.pinned.erase(key) + it->second.pending.erase(key);
        }
        return gone > 0;
    });
    return gone;
}

Task<PinSnapshot> LocalPinStore::load() {
    co_return co_await on_file([](LocalPinStore& file) { return file.load_now(); });
}
Task<std::string> LocalPinStore::version() {
    co_return co_await on_file([](LocalPinStore& file) { return file.version_now(); });
}
Task<std::size_t> LocalPinStore::record_listing(std::string source, ListingWrites writes) {
    co_return co_await on_file([source = std::move(source), writes = std::move(writes)](LocalPinStore& file) {
        return file.record_listing_now(source, writes);
    });
}
Task<PinStore::RecordedListing> LocalPinStore::record_listing_from(std::string source, ListingWrites writes,
                                                                   std::string expected_version) {
    // The run of writes is this store's, not that of the store the work opens.
    co_return co_await on_file([source = std::move(source), writes = std::move(writes),
                                expected = std::move(expected_version), chain = chain_](LocalPinStore& file) {
        return file.record_listing_from_now(source, writes, expected, chain.get());
    });
}
Task<void> LocalPinStore::approve(std::string source, PinRecord record) {
    co_await on_file([source = std::move(source), record = std::move(record)](LocalPinStore& file) {
        file.approve_now(source, record);
    });
}
Task<std::size_t> LocalPinStore::reset(std::string source, std::string key) {
    co_return co_await on_file([source = std::move(source), key = std::move(key)](LocalPinStore& file) {
        return file.reset_now(source, key);
    });
}

}  // namespace toolport::stores
