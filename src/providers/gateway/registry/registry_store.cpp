#include "providers/gateway/registry/registry_store.hpp"

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <unistd.h>

#include "util/percent.hpp"
#include "util/state_dir.hpp"

namespace toolport::registry {

namespace fs = std::filesystem;

namespace {

// One path segment per part: percent-encoding leaves no '/' and no "..".
std::string file_name(const std::string& registry, const std::string& name, const std::string& requested) {
    return util::percent_encode(registry) + "_" + util::percent_encode(name) + "_" + util::percent_encode(requested) +
           ".json";
}

std::optional<KeptEntry> read_file(const fs::path& path) {
    std::ifstream in(path);
    if (!in) return std::nullopt;
    std::stringstream text;
    text << in.rdbuf();
    try {
        const Json j = Json::parse(text.str());
        KeptEntry k;
        k.registry = j.at("registry").get<std::string>();
        k.name = j.at("name").get<std::string>();
        k.requested = j.at("requested").get<std::string>();
        k.version = j.at("version").get<std::string>();
        k.resolved_at = j.value("resolved_at", "");
        k.entry.server = j.at("server");
        if (auto official = j.find("official"); official != j.end()) k.entry.official = *official;
        if (!k.entry.server.is_object()) return std::nullopt;
        return k;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

}  // namespace

std::string registry_state_dir() { return util::state_path("registry"); }

std::optional<KeptEntry> load_kept(const std::string& dir, const std::string& registry, const std::string& name,
                                   const std::string& requested) {
    if (dir.empty()) return std::nullopt;
    auto kept = read_file(fs::path(dir) / file_name(registry, name, requested));
    if (!kept || kept->registry != registry || kept->name != name || kept->requested != requested) return std::nullopt;
    return kept;
}

void keep(const std::string& dir, const KeptEntry& kept) {
    if (dir.empty()) throw std::runtime_error("no state directory (set XDG_STATE_HOME or HOME)");
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw std::runtime_error(fmt::format("cannot create {}: {}", dir, ec.message()));
    const Json j = {{"registry", kept.registry},       {"name", kept.name},
                    {"requested", kept.requested},     {"version", kept.version},
                    {"resolved_at", kept.resolved_at}, {"server", kept.entry.server},
                    {"official", kept.entry.official}};
    const fs::path target = fs::path(dir) / file_name(kept.registry, kept.name, kept.requested);
    const fs::path temporary = target.string() + fmt::format(".{}.tmp", ::getpid());
    {
        std::ofstream out(temporary, std::ios::trunc);
        out << j.dump(2) << '\n';
        if (!out) throw std::runtime_error(fmt::format("cannot write {}", temporary.string()));
    }
    fs::rename(temporary, target, ec);
    if (ec) {
        fs::remove(temporary, ec);
        throw std::runtime_error(fmt::format("cannot write {}", target.string()));
    }
}

std::vector<KeptEntry> kept_entries(const std::string& dir, const std::string& registry) {
    std::vector<KeptEntry> out;
    std::error_code ec;
    if (dir.empty() || !fs::is_directory(dir, ec)) return out;
    for (const auto& file : fs::directory_iterator(dir, ec)) {
        if (file.path().extension() != ".json") continue;
        if (auto kept = read_file(file.path()); kept && kept->registry == registry) out.push_back(std::move(*kept));
    }
    return out;
}

std::string utc_now() {
    const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buffer[32];
    std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buffer;
}

}  // namespace toolport::registry
