#include "client/oauth/token_store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "util/json.hpp"
#include "util/random.hpp"

namespace toolport::client::oauth {

namespace {

constexpr std::size_t kMaxStoreBytes = 16 << 20;

Json client_json(const RegisteredClient& c) {
    return {{"issuer", c.issuer},
            {"client_id", c.client_id},
            {"client_secret", c.client_secret},
            {"auth_method", c.auth_method},
            {"kind", c.kind}};
}

Json tokens_json(const StoredTokens& t) {
    Json j = {{"issuer", t.issuer},         {"access_token", t.access_token},
              {"token_type", t.token_type}, {"refresh_token", t.refresh_token},
              {"expires_at", t.expires_at}, {"scopes", t.scopes}};
    if (!t.dpop_key.empty()) j["dpop_key"] = t.dpop_key;
    return j;
}

std::string str(const Json& j, const char* name) {
    auto it = j.find(name);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

ServerEntry entry_from(const Json& j) {
    ServerEntry e;
    e.resource = str(j, "resource");
    if (auto c = j.find("client"); c != j.end() && c->is_object()) {
        e.client = RegisteredClient{str(*c, "issuer"), str(*c, "client_id"), str(*c, "client_secret"),
                                    str(*c, "auth_method"), str(*c, "kind")};
    }
    if (auto t = j.find("tokens"); t != j.end() && t->is_object()) {
        StoredTokens tokens;
        tokens.issuer = str(*t, "issuer");
        tokens.access_token = str(*t, "access_token");
        tokens.token_type = str(*t, "token_type");
        tokens.refresh_token = str(*t, "refresh_token");
        tokens.dpop_key = str(*t, "dpop_key");
        if (auto x = t->find("expires_at"); x != t->end() && x->is_number_integer())
            tokens.expires_at = x->get<std::int64_t>();
        if (auto s = t->find("scopes"); s != t->end() && s->is_array()) {
            for (const auto& scope : *s) {
                if (scope.is_string()) tokens.scopes.push_back(scope.get<std::string>());
            }
        }
        e.tokens = std::move(tokens);
    }
    return e;
}

}  // namespace

std::string TokenStore::default_path() {
    const char* xdg = std::getenv("XDG_CONFIG_HOME");
    if (xdg && *xdg == '/') return std::string(xdg) + "/toolport/oauth-tokens.json";
    const char* home = std::getenv("HOME");
    if (home && *home) return std::string(home) + "/.config/toolport/oauth-tokens.json";
    throw TokenStoreError("neither XDG_CONFIG_HOME nor HOME is set: nowhere to keep OAuth tokens");
}

namespace {

// The whole store; an empty object when there is no file yet.
Json read_store(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        if (errno == ENOENT) return Json::object();
        throw TokenStoreError(fmt::format("cannot read {}: {}", path, std::strerror(errno)));
    }
    std::ostringstream text;
    text << in.rdbuf();
    if (text.str().size() > kMaxStoreBytes)
        throw TokenStoreError(fmt::format("{} is too large to be a token store", path));
    Json store = Json::parse(text.str(), nullptr, false);
    if (store.is_discarded() || !store.is_object()) {
        throw TokenStoreError(fmt::format("{} is not a JSON object; remove it to start afresh", path));
    }
    return store;
}

void write_store(const std::string& path, const Json& store) {
    std::filesystem::path file(path);
    std::filesystem::path dir = file.parent_path();
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw TokenStoreError(fmt::format("cannot create {}: {}", dir.string(), ec.message()));
    // Only the directory we create is narrowed: an existing one (e.g. ~/.config) is the user's.
    ::chmod(dir.c_str(), 0700);
    std::string temp = path + ".tmp-" + util::random_hex(8);
    // O_EXCL: never write through a file (or link) someone else put there; 0600 from birth,
    // so the tokens are never readable by others even for a moment.
    int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) throw TokenStoreError(fmt::format("cannot create {}: {}", temp, std::strerror(errno)));
    const std::string text = store.dump(2) + "\n";
    std::size_t written = 0;
    while (written < text.size()) {
        ssize_t n = ::write(fd, text.data() + written, text.size() - written);
        if (n < 0) {
            if (errno == EINTR) continue;
            int err = errno;
            ::close(fd);
            ::unlink(temp.c_str());
            throw TokenStoreError(fmt::format("cannot write {}: {}", temp, std::strerror(err)));
        }
        written += static_cast<std::size_t>(n);
    }
    // The umask may have narrowed 0600 further, never widened it; fchmod makes it exact.
    ::fchmod(fd, 0600);
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
        int err = errno;
        ::unlink(temp.c_str());
        throw TokenStoreError(fmt::format("cannot write {}: {}", temp, std::strerror(err)));
    }
    if (::rename(temp.c_str(), path.c_str()) != 0) {
        int err = errno;
        ::unlink(temp.c_str());
        throw TokenStoreError(fmt::format("cannot replace {}: {}", path, std::strerror(err)));
    }
}

}  // namespace

std::optional<ServerEntry> TokenStore::load(const std::string& server) const {
    Json store = read_store(path_);
    auto servers = store.find("servers");
    if (servers == store.end() || !servers->is_object()) return std::nullopt;
    auto it = servers->find(server);
    if (it == servers->end() || !it->is_object()) return std::nullopt;
    return entry_from(*it);
}

void TokenStore::save(const std::string& server, const ServerEntry& entry) {
    Json store = read_store(path_);
    if (!store.contains("servers") || !store["servers"].is_object()) store["servers"] = Json::object();
    Json j = {{"resource", entry.resource}};
    if (entry.client) j["client"] = client_json(*entry.client);
    if (entry.tokens) j["tokens"] = tokens_json(*entry.tokens);
    store["servers"][server] = std::move(j);
    write_store(path_, store);
}

bool TokenStore::remove(const std::string& server) {
    Json store = read_store(path_);
    auto servers = store.find("servers");
    if (servers == store.end() || !servers->is_object() || !servers->contains(server)) return false;
    servers->erase(server);
    write_store(path_, store);
    return true;
}

}  // namespace toolport::client::oauth
