// What the official client conformance scenarios ask of Toolport's MCP client, against
// scripted servers: elicitation answered with the requested schema's defaults (SEP-1034),
// also as inputResponses of an input_required result; a server/discover refused for its
// version (-32022) asked again in a version the server names (SEP-2575); tools whose
// x-mcp-header markings are invalid left out of a listing and never called (SEP-2243);
// a skill loaded only once verified against its listing (size, digest, frontmatter), its
// other files read only after SKILL.md passed (SEP-2640).
// The scenarios themselves run in tests/conformance/client_run.sh.
#include <gtest/gtest.h>

#include "client/elicitation_answers.hpp"
#include "client/mcp_client.hpp"
#include "client/skills.hpp"
#include "client/stateless_http_headers.hpp"
#include "util/digest.hpp"
#include "manual_executor.hpp"
#include "protocol/jsonrpc.hpp"
#include "scripted_client_transports.hpp"

using namespace toolport;
using namespace toolport::client;
using namespace std::chrono_literals;
using test_support::ScriptedTransport;

namespace {

// The requested schema of the suite's SEP-1034 scenario, plus a field without a default.
Json defaults_schema() {
    return Json::parse(R"({
      "type": "object",
      "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "score": {"type": "number", "default": 95.5},
        "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
        "verified": {"type": "boolean", "default": true},
        "nickname": {"type": "string"}
      }
    })");
}

Json elicit(Json schema) { return {{"message", "please"}, {"requestedSchema", std::move(schema)}}; }

TEST(ElicitationAnswers, AcceptsWithEveryDefaultThatFitsItsType) {
    Json answer = answer_elicitation(elicit(defaults_schema()), ElicitationPolicy::accept_defaults);
    EXPECT_EQ(answer["action"], "accept");
    EXPECT_EQ(answer["content"],
              (Json{{"name", "John Doe"}, {"age", 30}, {"score", 95.5}, {"status", "active"}, {"verified", true}}));
}

TEST(ElicitationAnswers, LeavesOutDefaultsOfTheWrongTypeOrOutsideTheEnum) {
    Json schema = Json::parse(R"({"type": "object", "properties": {
        "age": {"type": "integer", "default": "thirty"},
        "ratio": {"type": "integer", "default": 0.5},
        "status": {"type": "string", "enum": ["a", "b"], "default": "c"},
        "flags": {"type": "array", "items": {"type": "string"}, "default": ["x", "y"]}}})");
    Json answer = answer_elicitation(elicit(schema), ElicitationPolicy::accept_defaults);
    EXPECT_EQ(answer["action"], "accept");
    EXPECT_EQ(answer["content"], (Json{{"flags", {"x", "y"}}}));
}

TEST(ElicitationAnswers, DeclinesWhenARequiredFieldHasNoDefaultAndForUrlMode) {
    Json schema = defaults_schema();
    schema["required"] = {"name", "nickname"};
    EXPECT_EQ(answer_elicitation(elicit(schema), ElicitationPolicy::accept_defaults), (Json{{"action", "decline"}}));
    schema["required"] = {"name", "age"};
    EXPECT_EQ(answer_elicitation(elicit(schema), ElicitationPolicy::accept_defaults)["action"], "accept");
    Json url = {{"mode", "url"}, {"message", "open this"}, {"url", "https://example.com"}, {"elicitationId", "e1"}};
    EXPECT_EQ(answer_elicitation(url, ElicitationPolicy::accept_defaults), (Json{{"action", "decline"}}));
}

TEST(ElicitationAnswers, DeclineAndCancelPolicies) {
    EXPECT_EQ(answer_elicitation(elicit(defaults_schema()), ElicitationPolicy::decline), (Json{{"action", "decline"}}));
    EXPECT_EQ(answer_elicitation(elicit(defaults_schema()), ElicitationPolicy::cancel), (Json{{"action", "cancel"}}));
    EXPECT_EQ(parse_elicitation_policy("defaults"), ElicitationPolicy::accept_defaults);
    EXPECT_EQ(parse_elicitation_policy("decline"), ElicitationPolicy::decline);
    EXPECT_EQ(parse_elicitation_policy("cancel"), ElicitationPolicy::cancel);
    EXPECT_FALSE(parse_elicitation_policy("yes").has_value());
    EXPECT_EQ(elicitation_capabilities(), (Json{{"elicitation", {{"form", Json::object()}}}}));
}

TEST(XMcpHeaderProblem, AcceptsValidMarkingsAndNamesEachKindOfInvalidOne) {
    auto tool = [](Json properties) {
        return Json{{"name", "t"}, {"inputSchema", {{"type", "object"}, {"properties", std::move(properties)}}}};
    };
    EXPECT_FALSE(x_mcp_header_problem(tool({{"region", {{"type", "string"}, {"x-mcp-header", "Region"}}},
                                            {"n", {{"type", "integer"}, {"x-mcp-header", "N"}}},
                                            {"b", {{"type", "boolean"}, {"x-mcp-header", "B"}}},
                                            {"free", {{"type", "number"}}}}))
                     .has_value());
    EXPECT_FALSE(x_mcp_header_problem(Json{{"name", "no-schema"}}).has_value());
    struct Case {
        Json properties;
        const char* expect;
    };
    const std::vector<Case> cases = {
        {{{"v", {{"type", "string"}, {"x-mcp-header", ""}}}}, "empty"},
        {{{"v", {{"type", "object"}, {"x-mcp-header", "V"}}}}, "string, integer or boolean"},
        {{{"v", {{"type", "array"}, {"x-mcp-header", "V"}}}}, "string, integer or boolean"},
        {{{"v", {{"type", "null"}, {"x-mcp-header", "V"}}}}, "string, integer or boolean"},
        {{{"v", {{"type", "number"}, {"x-mcp-header", "V"}}}}, "string, integer or boolean"},
        {{{"a", {{"type", "string"}, {"x-mcp-header", "MyField"}}},
          {"b", {{"type", "string"}, {"x-mcp-header", "myfield"}}}},
         "another property"},
        {{{"v", {{"type", "string"}, {"x-mcp-header", "My Region"}}}}, "not an HTTP header name"},
        {{{"v", {{"type", "string"}, {"x-mcp-header", "Region:Primary"}}}}, "not an HTTP header name"},
        {{{"v", {{"type", "string"}, {"x-mcp-header", "R\xc3\xa9gion"}}}}, "not an HTTP header name"},
        {{{"v", {{"type", "string"}, {"x-mcp-header", "Region\t1"}}}}, "not an HTTP header name"},
        {{{"v", {{"type", "string"}, {"x-mcp-header", 7}}}}, "not a string"},
    };
    for (const auto& c : cases) {
        auto problem = x_mcp_header_problem(tool(c.properties));
        ASSERT_TRUE(problem.has_value()) << c.properties.dump();
        EXPECT_NE(problem->find(c.expect), std::string::npos) << *problem;
    }
}

// Drives a task on the manual executor until it is done.
template <typename T>
T drive(test_support::ManualExecutor& exec, Task<T> task) {
    struct Outcome {
        bool done = false;
        std::optional<T> value;
        std::exception_ptr error;
    };
    auto outcome = std::make_shared<Outcome>();
    spawn(std::move(task), [outcome](std::optional<T> v, std::exception_ptr e) {
        outcome->value = std::move(v);
        outcome->error = e;
        outcome->done = true;
    });
    exec.run();
    for (int i = 0; !outcome->done && i < 1000; ++i) exec.advance(10ms);
    if (!outcome->done) throw std::runtime_error("the task did not finish within 10 s of fake time");
    if (outcome->error) std::rethrow_exception(outcome->error);
    return std::move(*outcome->value);
}

void drive(test_support::ManualExecutor& exec, Task<void> task) {
    auto wrap = [](Task<void> t) -> Task<Json> {
        co_await std::move(t);
        co_return Json();
    };
    drive(exec, wrap(std::move(task)));
}

Json discover_reply(const Json& request) {
    return protocol::make_response(request["id"], {{"resultType", "complete"},
                                                   {"supportedVersions", {"2026-07-28"}},
                                                   {"capabilities", {{"tools", Json::object()}}},
                                                   {"serverInfo", {{"name", "scripted"}, {"version", "1"}}}});
}

ClientOptions stateless() {
    ClientOptions options;
    options.protocol_version = "2026-07-28";
    return options;
}

class ClientConformanceBehaviour : public ::testing::Test {
protected:
    test_support::ManualExecutor exec;
    std::vector<Json> seen;
};

TEST_F(ClientConformanceBehaviour, DiscoverRefusedForItsVersionIsAskedAgainInOneTheServerNames) {
    auto transport = std::make_unique<ScriptedTransport>(exec, [&](const Json& m) -> std::vector<Json> {
        seen.push_back(m);
        if (m.value("method", "") != "server/discover") return {};
        if (seen.size() == 1) {
            return {protocol::make_error(m["id"], -32022, "Unsupported protocol version",
                                         {{"supported", {"1999-01-01", "2026-07-28"}}, {"requested", "2026-07-28"}})};
        }
        return {discover_reply(m)};
    });
    McpClient client(exec, std::move(transport), stateless());
    drive(exec, client.connect());
    EXPECT_EQ(client.protocol_version(), "2026-07-28");
    ASSERT_EQ(seen.size(), 2u);
    EXPECT_EQ(seen[1]["method"], "server/discover");
    EXPECT_NE(seen[0]["id"], seen[1]["id"]);
    EXPECT_EQ(seen[1]["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
    drive(exec, client.close());
}

TEST_F(ClientConformanceBehaviour, DiscoverRefusedWithoutAVersionWeSpeakFails) {
    auto transport = std::make_unique<ScriptedTransport>(exec, [&](const Json& m) -> std::vector<Json> {
        seen.push_back(m);
        return {protocol::make_error(m["id"], -32022, "Unsupported protocol version", {{"supported", {"2099-01-01"}}})};
    });
    McpClient client(exec, std::move(transport), stateless());
    try {
        drive(exec, client.connect());
        FAIL() << "expected RpcError";
    } catch (const RpcError& e) {
        EXPECT_EQ(e.code, -32022);
    }
    EXPECT_EQ(seen.size(), 1u) << "asked once only";
}

TEST_F(ClientConformanceBehaviour, ToolsWithInvalidHeaderMarkingsAreLeftOutAndNotCalled) {
    auto transport = std::make_unique<ScriptedTransport>(exec, [&](const Json& m) -> std::vector<Json> {
        seen.push_back(m);
        const std::string method = m.value("method", "");
        if (method == "server/discover") return {discover_reply(m)};
        if (method == "tools/list") {
            Json valid = {{"name", "valid_tool"},
                          {"inputSchema",
                           {{"type", "object"},
                            {"properties", {{"region", {{"type", "string"}, {"x-mcp-header", "Region"}}}}}}}};
            Json invalid = {{"name", "invalid_number_header"},
                            {"inputSchema",
                             {{"type", "object"},
                              {"properties", {{"score", {{"type", "number"}, {"x-mcp-header", "Score"}}}}}}}};
            return {protocol::make_response(m["id"], {{"resultType", "complete"}, {"tools", {valid, invalid}}})};
        }
        if (method == "tools/call") {
            return {protocol::make_response(m["id"], {{"resultType", "complete"}, {"content", Json::array()}})};
        }
        return {};
    });
    McpClient client(exec, std::move(transport), stateless());
    drive(exec, client.connect());
    auto tools = drive(exec, client.list_tools());
    ASSERT_EQ(tools.size(), 1u);
    EXPECT_EQ(tools[0]["name"], "valid_tool");
    ASSERT_EQ(client.excluded_tools().count("invalid_number_header"), 1u);
    EXPECT_NE(client.excluded_tools().at("invalid_number_header").find("score"), std::string::npos);

    drive(exec, client.call_tool("valid_tool", {{"region", "eu"}}));
    EXPECT_THROW(drive(exec, client.call_tool("invalid_number_header", {{"score", 1}})), ClientError);
    int calls = 0;
    for (const auto& m : seen) calls += m.value("method", "") == "tools/call";
    EXPECT_EQ(calls, 1) << "the excluded tool never reached the server";
    drive(exec, client.close());
}

TEST_F(ClientConformanceBehaviour, ElicitationIsAnsweredInASessionAndAsInputResponses) {
    // A session: the server asks during a call, the handler answers with the defaults.
    Json answer;
    auto session = std::make_unique<ScriptedTransport>(exec, [&](const Json& m) -> std::vector<Json> {
        const std::string method = m.value("method", "");
        if (method == "initialize") {
            return {protocol::make_response(m["id"], {{"protocolVersion", "2025-11-25"},
                                                      {"capabilities", {{"tools", Json::object()}}},
                                                      {"serverInfo", {{"name", "s"}, {"version", "1"}}}})};
        }
        if (method == "tools/call") {
            seen.push_back(m);
            return {protocol::make_request(900, "elicitation/create", elicit(defaults_schema()))};
        }
        if (!m.contains("method") && m.value("id", Json()) == 900) {
            answer = m["result"];
            return {protocol::make_response(seen.back()["id"], {{"content", Json::array()}})};
        }
        return {};
    });
    ClientOptions options;
    options.capabilities = elicitation_capabilities();
    McpClient client(exec, std::move(session), options);
    client.on_request(elicitation_request_handler(ElicitationPolicy::accept_defaults));
    drive(exec, client.connect());
    drive(exec, client.call_tool("asks"));
    EXPECT_EQ(answer["action"], "accept");
    EXPECT_EQ(answer["content"]["name"], "John Doe");
    drive(exec, client.close());

    // Stateless: the same question as an input request; other questions fail the request.
    std::vector<Json> retries;
    auto modern = std::make_unique<ScriptedTransport>(exec, [&](const Json& m) -> std::vector<Json> {
        const std::string method = m.value("method", "");
        if (method == "server/discover") return {discover_reply(m)};
        if (method != "tools/call") return {};
        if (m["params"].contains("inputResponses")) {
            retries.push_back(m);
            return {protocol::make_response(m["id"], {{"resultType", "complete"}, {"content", Json::array()}})};
        }
        const std::string tool = m["params"]["name"];
        Json question = tool == "asks" ? Json{{"method", "elicitation/create"}, {"params", elicit(defaults_schema())}}
                                       : Json{{"method", "sampling/createMessage"}, {"params", Json::object()}};
        return {protocol::make_response(
            m["id"], {{"resultType", "input_required"}, {"inputRequests", {{"q", question}}}, {"requestState", "st"}})};
    });
    McpClient modern_client(exec, std::move(modern), stateless());
    drive(exec, modern_client.connect());
    RequestOptions request;
    request.on_input_required = input_request_answerer(ElicitationPolicy::accept_defaults);
    drive(exec, modern_client.call_tool("asks", Json::object(), request));
    ASSERT_EQ(retries.size(), 1u);
    EXPECT_EQ(retries[0]["params"]["inputResponses"]["q"]["action"], "accept");
    EXPECT_EQ(retries[0]["params"]["inputResponses"]["q"]["content"]["age"], 30);
    EXPECT_EQ(retries[0]["params"]["requestState"], "st");
    try {
        drive(exec, modern_client.call_tool("samples", Json::object(), request));
        FAIL() << "expected ClientError";
    } catch (const ClientError& e) {
        EXPECT_NE(std::string(e.what()).find("sampling/createMessage"), std::string::npos) << e.what();
    }
    EXPECT_EQ(retries.size(), 1u);
    drive(exec, modern_client.close());
}

const std::string kSkillMd =
    "---\nname: pdf-processing\ndescription: Extract PDF text\nmetadata:\n  quality: \"8.6\"\n  tags: [a, "
    "b]\n---\n\nBody.\n";
const std::string kForms = "Supporting content.\n";

Json file_entry(const std::string& uri, const std::string& content) {
    return {{"uri", uri}, {"digest", "sha256:" + util::sha256_hex(content)}, {"size", content.size()}};
}

Json skill_entry() {
    return {{"uri", "skill://pdf/SKILL.md"},
            {"frontmatter",
             {{"name", "pdf-processing"},
              {"description", "Extract PDF text"},
              {"metadata", {{"quality", "8.6"}, {"tags", {"a", "b"}}}}}},
            {"resources", {file_entry("skill://pdf/SKILL.md", kSkillMd), file_entry("skill://pdf/FORMS.md", kForms)}}};
}

TEST(SkillVerification, SizeAndDigest) {
    Json listed = file_entry("skill://pdf/SKILL.md", kSkillMd);
    EXPECT_FALSE(skill_file_mismatch(listed, kSkillMd).has_value());
    auto longer = skill_file_mismatch(listed, kSkillMd + "x");
    ASSERT_TRUE(longer.has_value());
    EXPECT_NE(longer->find("bytes read"), std::string::npos) << *longer;
    std::string same_size = kSkillMd;
    same_size[same_size.size() - 2] = '!';
    auto tampered = skill_file_mismatch(listed, same_size);
    ASSERT_TRUE(tampered.has_value());
    EXPECT_NE(tampered->find("SHA-256"), std::string::npos) << *tampered;
    listed["digest"] = "md5:abc";
    EXPECT_TRUE(skill_file_mismatch(listed, kSkillMd).has_value());
    EXPECT_FALSE(skill_file_mismatch(Json{{"uri", "u"}}, "anything").has_value()) << "nothing listed, nothing checked";
}

TEST(SkillVerification, FrontmatterFieldByField) {
    const Json expected = skill_entry()["frontmatter"];
    EXPECT_FALSE(frontmatter_mismatch(kSkillMd, expected).has_value());
    std::string other = kSkillMd;
    other.replace(other.find("Extract PDF text"), 16, "Exfiltrate creds");
    auto changed = frontmatter_mismatch(other, expected);
    ASSERT_TRUE(changed.has_value());
    EXPECT_NE(changed->find("description"), std::string::npos) << *changed;
    Json nested = expected;
    nested["metadata"]["quality"] = "9.0";
    EXPECT_TRUE(frontmatter_mismatch(kSkillMd, nested).has_value());
    Json missing = expected;
    missing["license"] = "MIT";
    EXPECT_TRUE(frontmatter_mismatch(kSkillMd, missing).has_value());
    EXPECT_TRUE(frontmatter_mismatch("# no frontmatter\n", expected).has_value());
    EXPECT_TRUE(frontmatter_mismatch("---\nname: [unclosed\n---\n", expected).has_value());
}

TEST(SkillChoice, ByUriIdOrUniqueBareNameElseTheFullIdsToUse) {
    auto entry = [](const std::string& category, const std::string& name) {
        return Json{{"uri", "skill://" + category + "/" + name + "/SKILL.md"}, {"frontmatter", {{"name", name}}}};
    };
    const std::vector<Json> entries{entry("backend", "retry"), entry("testing", "retry"),
                                    entry("database", "rls-policy")};
    EXPECT_EQ(skill_id(entries[2]), "database/rls-policy");
    EXPECT_EQ(&choose_skill(entries, "rls-policy", "srv"), &entries[2]);
    EXPECT_EQ(&choose_skill(entries, "testing/retry", "srv"), &entries[1]);
    EXPECT_EQ(&choose_skill(entries, "skill://backend/retry/SKILL.md", "srv"), &entries[0]);
    auto refusal = [&](const std::string& wanted) {
        try {
            choose_skill(entries, wanted, "srv");
        } catch (const ClientError& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    EXPECT_EQ(refusal("retry"),
              "srv lists 2 skills named retry: give the full id, one of: backend/retry, testing/retry");
    EXPECT_EQ(refusal("rls"), "srv lists no skill rls; did you mean database/rls-policy?");
    EXPECT_EQ(refusal("pdf"), "srv lists no skill pdf; `toolport skills` without a name lists them");
}

// A skills server whose SKILL.md is `served`; records the resources/read URIs.
std::unique_ptr<ScriptedTransport> skills_server(test_support::ManualExecutor& exec, std::string served,
                                                 std::vector<std::string>& reads) {
    return std::make_unique<ScriptedTransport>(exec, [&reads, served](const Json& m) -> std::vector<Json> {
        const std::string method = m.value("method", "");
        if (method == "server/discover") return {discover_reply(m)};
        if (method == "skills/list") {
            return {protocol::make_response(m["id"], {{"resultType", "complete"}, {"skills", {skill_entry()}}})};
        }
        if (method == "resources/read") {
            const std::string uri = m["params"]["uri"];
            reads.push_back(uri);
            const std::string& text = uri == "skill://pdf/FORMS.md" ? kForms : served;
            return {protocol::make_response(
                m["id"], {{"resultType", "complete"},
                          {"contents", {{{"uri", uri}, {"mimeType", "text/markdown"}, {"text", text}}}}})};
        }
        return {};
    });
}

TEST_F(ClientConformanceBehaviour, ASkillLoadsOnlyVerifiedAndListingReadsNoFile) {
    std::vector<std::string> reads;
    McpClient client(exec, skills_server(exec, kSkillMd, reads), stateless());
    drive(exec, client.connect());
    auto skills = drive(exec, list_skills(client));
    ASSERT_EQ(skills.size(), 1u);
    EXPECT_TRUE(reads.empty()) << "listing reads no skill file";
    Json loaded = drive(exec, load_skill(client, skills[0], /*with_files=*/true));
    EXPECT_EQ(loaded["text"], kSkillMd);
    ASSERT_EQ(loaded["files"].size(), 1u);
    EXPECT_EQ(loaded["files"][0]["text"], kForms);
    EXPECT_EQ(reads, (std::vector<std::string>{"skill://pdf/SKILL.md", "skill://pdf/FORMS.md"}));
    drive(exec, client.close());

    // A tampered SKILL.md: the load fails and no other file is read.
    std::string tampered = kSkillMd;
    tampered.replace(tampered.find("Body."), 5, "Evil!");
    reads.clear();
    McpClient other(exec, skills_server(exec, tampered, reads), stateless());
    drive(exec, other.connect());
    auto listed = drive(exec, list_skills(other));
    EXPECT_THROW(drive(exec, load_skill(other, listed[0], /*with_files=*/true)), SkillVerificationError);
    EXPECT_EQ(reads, (std::vector<std::string>{"skill://pdf/SKILL.md"}));
    drive(exec, other.close());
}

}  // namespace
