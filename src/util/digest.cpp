#include "util/digest.hpp"

#include <openssl/evp.h>

#include <array>
#include <stdexcept>

namespace toolport::util {

// OpenSSL 3 looks EVP_sha256() up in its provider registry (locks and a hash table) on
// every EVP_Digest call: with three digests per tools/call (cache key, client quota,
// budget scope) that lookup was ~7 % of a call's CPU. The implementation is fetched
// once instead; a fetched EVP_MD may be used from any thread. Never freed: digests may
// still be taken while the process exits.
const EVP_MD* sha256_md() {
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
    static const EVP_MD* const fetched = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    if (fetched) return fetched;
#endif
    return EVP_sha256();
}

std::array<unsigned char, 32> sha256(std::string_view data) {
    // One context per thread, kept: EVP_Digest makes and frees one per call (an allocation,
    // locks and a cleanse), which cost more than hashing a short text.
    struct Context {
        EVP_MD_CTX* ctx = EVP_MD_CTX_new();
        ~Context() { EVP_MD_CTX_free(ctx); }
    };
    thread_local Context context;
    std::array<unsigned char, 32> digest;
    unsigned int length = 0;
    if (!context.ctx || EVP_DigestInit_ex(context.ctx, sha256_md(), nullptr) != 1 ||
        EVP_DigestUpdate(context.ctx, data.data(), data.size()) != 1 ||
        EVP_DigestFinal_ex(context.ctx, digest.data(), &length) != 1 || length != digest.size())
        throw std::runtime_error("SHA-256 failed");
    return digest;
}

std::string sha256_hex(std::string_view data) {
    const auto digest = sha256(data);
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out(digest.size() * 2, '0');
    for (std::size_t i = 0; i < digest.size(); ++i) {
        out[2 * i] = kHex[digest[i] >> 4];
        out[2 * i + 1] = kHex[digest[i] & 0xf];
    }
    return out;
}

std::string named_digest(std::string_view prefix, std::string_view secret) {
    struct Named {
        std::string prefix, secret, name;
    };
    thread_local std::array<Named, 8> recent;
    thread_local std::size_t next = 0;
    for (const auto& n : recent) {
        if (!n.name.empty() && n.secret == secret && n.prefix == prefix) return n.name;
    }
    // The digest's own string, cut and prefixed in place: one allocation, not three.
    std::string name = sha256_hex(secret);
    name.resize(24);
    name.insert(0, prefix);
    recent[next] = Named{std::string(prefix), std::string(secret), name};
    next = (next + 1) % recent.size();
    return name;
}

}  // namespace toolport::util
