#include "server/input_required.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <fmt/format.h>

#include "server/session.hpp"
#include "util/base64.hpp"

namespace toolport {

namespace {

std::string hmac_sha256(const std::string& key, const std::string& data) {
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
         data.size(), out, &len);
    return std::string(reinterpret_cast<char*>(out), len);
}

std::string input_key(int index) { return fmt::format("input_{}", index + 1); }

// The shape checks that tell an answer from garbage (the full result schemas are the
// client's business; a handler only reads these fields).
bool plausible_answer(const std::string& method, const Json& answer) {
    if (!answer.is_object()) return false;
    if (method == "elicitation/create") return answer.contains("action") && answer["action"].is_string();
    if (method == "sampling/createMessage") return answer.contains("content");
    if (method == "roots/list") return answer.contains("roots") && answer["roots"].is_array();
    return true;
}

// Earlier rounds' answers, from a verified requestState. Throws RpcError when the state
// was tampered with.
Json earlier_answers(const RequestContext& ctx) {
    auto it = ctx.params().find("requestState");
    if (it == ctx.params().end() || it->is_null()) return Json::object();
    if (!it->is_string())
        throw RpcError(protocol::error_code::kInvalidParams, "Invalid params: requestState must be a string");
    auto state = open_request_state(ctx.session().server().options().state_secret, it->get<std::string>());
    if (!state || !state->is_object()) {
        throw RpcError(protocol::error_code::kInvalidParams,
                       "Invalid params: requestState is invalid or was modified; retry the request without it");
    }
    // The state is bound to the method and name it was issued for.
    if (state->value("method", "") != ctx.method() ||
        state->value("name", Json()) != ctx.params().value("name", ctx.params().value("uri", Json()))) {
        throw RpcError(protocol::error_code::kInvalidParams,
                       "Invalid params: requestState belongs to a different request");
    }
    return state->value("answers", Json::object());
}

}  // namespace

std::string seal_request_state(const std::string& key, const Json& state) {
    auto payload = state.dump();
    return util::base64url_encode(payload) + "." + util::base64url_encode(hmac_sha256(key, payload));
}

std::optional<Json> open_request_state(const std::string& key, const std::string& sealed) {
    auto dot = sealed.find('.');
    if (dot == std::string::npos) return std::nullopt;
    auto payload = util::base64url_decode(sealed.substr(0, dot));
    auto mac = util::base64url_decode(sealed.substr(dot + 1));
    if (!payload || !mac) return std::nullopt;
    auto expected = hmac_sha256(key, *payload);
    if (expected.size() != mac->size() || CRYPTO_memcmp(expected.data(), mac->data(), mac->size()) != 0) {
        return std::nullopt;
    }
    try {
        return Json::parse(*payload);
    } catch (const Json::exception&) {
        return std::nullopt;
    }
}

std::vector<Json> collect_input_responses(RequestContext& ctx, const std::vector<ClientRequest>& requests,
                                          int first_index) {
    // Never ask for what the client cannot answer: the request fails with -32021 naming
    // the capability instead.
    const Json& caps = ctx.client_capabilities();
    for (const auto& r : requests) {
        const char* capability = client_capability_for(r.method);
        if (capability && !caps.contains(capability)) {
            throw RpcError(protocol::error_code::kMissingRequiredClientCapability,
                           fmt::format("Missing required client capability \"{}\" for {}", capability, r.method),
                           Json{{"requiredCapabilities", {{capability, Json::object()}}}});
        }
    }
    Json answers = earlier_answers(ctx);
    auto responses = ctx.params().find("inputResponses");
    if (responses != ctx.params().end() && responses->is_object()) {
        for (const auto& [k, v] : responses->items()) answers[k] = v;
    }
    std::vector<Json> out;
    InputRequired missing;
    for (std::size_t i = 0; i < requests.size(); ++i) {
        const auto& r = requests[i];
        auto key = r.key.empty() ? input_key(first_index + static_cast<int>(i)) : r.key;
        auto it = answers.find(key);
        if (it != answers.end() && plausible_answer(r.method, *it)) {
            out.push_back(*it);
        } else {
            // Missing or malformed answers are asked for again rather than guessed at.
            if (it != answers.end()) answers.erase(it);
            missing.requests[key] = Json{{"method", r.method}, {"params", r.params}};
        }
    }
    if (!missing.requests.empty()) {
        missing.answered = std::move(answers);
        throw missing;
    }
    return out;
}

Json input_required_result(const InputRequired& e, RequestContext& ctx) {
    Json state = {{"method", ctx.method()},
                  {"name", ctx.params().value("name", ctx.params().value("uri", Json()))},
                  {"answers", e.answered}};
    return Json{{"resultType", "input_required"},
                {"inputRequests", e.requests},
                {"requestState", seal_request_state(ctx.session().server().options().state_secret, state)}};
}

}  // namespace toolport
