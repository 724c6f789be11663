// get_tango_vendor_profile → GET /api/entities/{uei}/ (a UEI or a CAGE code), with the
// vendor's most recent contracts from /api/entities/{uei}/contracts/ when asked.
#include <algorithm>
#include <cctype>
#include <iterator>

#include "providers/tango/records.hpp"
#include "providers/tango/tango_pack.hpp"
#include "providers/tango/validation.hpp"
#include "util/percent.hpp"

namespace toolport::tango {

namespace {

Json input_schema() {
    return object_schema({
        {"api_key", api_key_property()},
        {"uei", string_property("The vendor's Unique Entity ID (12 characters, e.g. 'N553JH75Z8K1') or CAGE code "
                                "(5 characters). Required: find it in a contract's vendor.uei.")},
        {"include_recent_contracts",
         {{"type", "boolean"},
          {"default", true},
          {"description", "Add the vendor's most recent contract awards (one more request)"}}},
        {"recent_contracts_limit",
         {{"type", "integer"},
          {"minimum", 1},
          {"maximum", 25},
          {"default", 5},
          {"description", "How many recent contracts (1-25, default 5)"}}},
    });
}

Json record_schema() {
    return object_schema(
        {{"uei", {{"type", {"string", "null"}}}},
         {"legal_business_name", {{"type", {"string", "null"}}}},
         {"cage_code", {{"type", {"string", "null"}}}},
         {"registration", {{"type", "object"}}},
         {"business_types", {{"type", "array"}}},
         {"federal_obligations", {{"type", "object"}}},
         {"complete",
          {{"type", "boolean"}, {"description", "false when a part asked for is missing (see recent_contracts_error)"}}},
         {"recent_contracts",
          {{"type", "array"},
           {"description",
            "With include_recent_contracts (the default), when Tango "
            "answered for them"}}},
         {"contracts_total",
          {{"type", "integer"}, {"description", "Every contract award of the vendor, with recent_contracts"}}},
         {"recent_contracts_error",
          part_error_schema("Why recent_contracts is missing: Tango refused that request alone (e.g. "
                            "403 for the plan, 404, 5xx); the profile itself is complete")}});
}

// The record's keys that are there only sometimes (the normalizer writes every other one).
const char* const kOptionalKeys[] = {"recent_contracts", "contracts_total", "recent_contracts_error"};

// A UEI or a CAGE code, upper-cased; MISSING_PARAMETER when absent.
std::string identifier(const Json& args) {
    auto value = text_arg(args, "uei", 40);
    if (!value) value = text_arg(args, "vendor_uei", 40);
    if (!value) {
        throw ToolError(ToolErrorCode::missing_parameter, "Missing required parameter: uei")
            .parameter("uei")
            .expected("a 12-character Unique Entity ID or a 5-character CAGE code")
            .example("N553JH75Z8K1")
            .suggest(
                "Provide a 12-character Unique Entity Identifier. You can search by vendor name first using "
                "search_tango_contracts with the vendor_name parameter.");
    }
    std::string id;
    for (char c : *value) id += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (!is_uei(id) && !is_cage(id)) {
        throw ToolError(ToolErrorCode::invalid_format, "Invalid UEI or CAGE code for uei")
            .parameter("uei")
            .provided(*value)
            .expected("12 letters and digits (no O or I, not starting with 0), or a 5-character CAGE code")
            .example("N553JH75Z8K1")
            .suggest("Copy vendor.uei from a search_tango_contracts result.");
    }
    return id;
}

Task<Json> profile(TangoCall& call, const Json& args) {
    const std::string id = identifier(args);
    const bool with_contracts = bool_arg(args, "include_recent_contracts").value_or(true);
    const int recent = int_arg(args, "recent_contracts_limit", 5, 1, 25);
    // No `shape` here: shaping entities is a paid-plan feature of the API, and the full
    // record carries every field the profile reads.
    Json entity = co_await call.get("/api/entities/" + util::percent_encode(id) + "/", Query());
    Json record = to_json(parse_vendor_profile(entity));
    Json filters = {{"uei", id}, {"include_recent_contracts", with_contracts}};
    record["complete"] = true;
    if (with_contracts) {
        filters["recent_contracts_limit"] = recent;
        Query q;
        q.add("limit", std::optional<int>(recent))
            .add("ordering", std::string("-award_date"))
            .add("shape", std::string(kContractShape));
        // The profile exists; its recent contracts are an extra. Tango may refuse that list
        // alone (a plan limit, a 404, its own trouble): the profile is still the answer,
        // labelled with the part it lacks and why.
        std::optional<ToolError> refused;
        try {
            Json body = co_await call.get("/api/entities/" + util::percent_encode(id) + "/contracts/", q);
            Page page = read_cursor_page(body);
            Json contracts = Json::array();
            for (const auto& row : page.rows) contracts.push_back(to_json(parse_contract(row)));
            record["recent_contracts"] = std::move(contracts);
            record["contracts_total"] = page.total;
        } catch (const ToolError& e) {
            refused = e;
        }
        if (refused) {
            record["recent_contracts_error"] = part_error(*refused);
            record["complete"] = false;
        }
    }
    co_return envelope(Json::array({std::move(record)}), 1, std::move(filters), 1, std::nullopt, {}, call.requests());
}

}  // namespace

providers::ToolDeclaration vendor_profile_tool(TangoPack& pack) {
    auto declaration = tango_tool(
        pack, "get_tango_vendor_profile", "Get a federal vendor's profile",
        "Get a vendor's (entity's) SAM.gov registration profile through the Tango API by UEI (12 characters) or CAGE "
        "code (5): legal and DBA names, CAGE code, registration status and dates, primary and other NAICS codes, PSC "
        "codes, business types (small, woman-owned, veteran-owned, ...), address, congressional district, website, "
        "federal obligations (total and active: dollars obligated, award and IDV counts, subawards), and by default "
        "its most recent contract awards. When Tango refuses the recent contracts alone (e.g. a plan limit), the "
        "profile still comes, with complete false and recent_contracts_error saying why. The uei is required: find it "
        "in search_tango_contracts results (vendor.uei) by searching with vendor_name.",
        input_schema(), record_schema(), profile);
    Json& required = declaration.output_schema["properties"]["data"]["items"]["required"];
    Json kept = Json::array();
    for (const auto& key : required) {
        if (std::find(std::begin(kOptionalKeys), std::end(kOptionalKeys), key.get<std::string>()) ==
            std::end(kOptionalKeys)) {
            kept.push_back(key);
        }
    }
    required = std::move(kept);
    return declaration;
}

}  // namespace toolport::tango
