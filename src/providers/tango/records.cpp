#include "providers/tango/records.hpp"

#include <cmath>

#include <fmt/format.h>

#include "providers/tango/validation.hpp"

namespace toolport::tango {

const char* const kContractShape =
    "key,piid,award_date,fiscal_year,description,obligated,total_contract_value,"
    "recipient(uei,display_name),awarding_office(*),naics(code,description),psc(code,description),"
    "set_aside(code,description),place_of_performance(*),period_of_performance(*)";
const char* const kGrantShape =
    "grant_id,opportunity_number,title,agency_code,status(*),cfda_numbers(number,title),"
    "funding_instruments(*),funding_categories(*),applicant_types(*),"
    "funding_details(award_ceiling,award_floor,estimated_total_funding,expected_number_of_awards),"
    "important_dates(posted_date,response_date)";
const char* const kOpportunityShape =
    "opportunity_id,title,solicitation_number,description,active,first_notice_date,last_notice_date,"
    "response_deadline,naics_code,psc_code,sam_url,office(*),set_aside(code,description),"
    "place_of_performance(*),meta(notice_type(*))";
const char* const kForecastShape =
    "id,title,agency,source_system,anticipated_award_date,fiscal_year,naics_code,set_aside,status";
const char* const kEntityShape =
    "uei,legal_business_name,dba_name,cage_code,registered,registration_status,sam_activation_date,"
    "sam_expiration_date,primary_naics,naics_codes,psc_codes,business_types,physical_address,"
    "congressional_district,entity_url,description,federal_obligations(*)";

namespace {

const Json& at(const Json& j, const char* key) {
    static const Json null;
    if (!j.is_object()) return null;
    auto it = j.find(key);
    return it == j.end() ? null : *it;
}

// A string, or a number written as text (codes come both ways).
Text text(const Json& v) {
    if (v.is_string()) {
        auto s = v.get<std::string>();
        if (s.empty()) return std::nullopt;
        return s;
    }
    if (v.is_number_integer()) return std::to_string(v.get<long long>());
    if (v.is_number_float()) {
        double d = v.get<double>();
        if (d == std::floor(d) && std::abs(d) < 1e15) return std::to_string(static_cast<long long>(d));
        return v.dump();
    }
    return std::nullopt;
}

Money money(const Json& v) {
    if (v.is_number()) return v.get<double>();
    if (v.is_string()) {
        try {
            std::size_t used = 0;
            double d = std::stod(v.get<std::string>(), &used);
            if (used == v.get<std::string>().size()) return d;
        } catch (const std::logic_error&) {}
    }
    return std::nullopt;
}

std::optional<long long> integer(const Json& v) {
    if (v.is_number_unsigned() && v.get<unsigned long long>() > 9223372036854775807ULL) return std::nullopt;
    if (v.is_number_integer()) return v.get<long long>();
    if (v.is_number_float()) {
        const double d = v.get<double>();
        // Outside long long's range the cast would be undefined behaviour.
        if (!(d > -9.2e18 && d < 9.2e18)) return std::nullopt;
        return static_cast<long long>(d);
    }
    if (v.is_string()) {
        try {
            std::size_t used = 0;
            long long n = std::stoll(v.get<std::string>(), &used);
            if (used == v.get<std::string>().size()) return n;
        } catch (const std::logic_error&) {}
    }
    return std::nullopt;
}

std::optional<bool> boolean(const Json& v) {
    if (v.is_boolean()) return v.get<bool>();
    return std::nullopt;
}

// "2026-08-24T14:00:00+00:00" → "2026-08-24"; a plain date stays as it is.
Text date_of(const Json& v) {
    auto t = text(v);
    if (t && t->size() >= 10 && is_calendar_date(t->substr(0, 10))) return t->substr(0, 10);
    return t;
}

// {code, description}, a bare code, or null.
Coded coded(const Json& v, const char* code_key = "code", const char* description_key = "description") {
    if (v.is_object()) return {text(at(v, code_key)), text(at(v, description_key))};
    return {text(v), std::nullopt};
}

std::vector<Coded> coded_list(const Json& v, const char* code_key = "code",
                              const char* description_key = "description") {
    std::vector<Coded> out;
    if (!v.is_array()) return out;
    for (const auto& item : v) {
        auto c = coded(item, code_key, description_key);
        if (c.code || c.description) out.push_back(std::move(c));
    }
    return out;
}

Agency agency_of_office(const Json& office) {
    return {text(at(office, "agency_name")), text(at(office, "agency_code")), text(at(office, "department_name")),
            text(at(office, "office_name")), text(at(office, "office_code"))};
}

Place place_of(const Json& p) {
    Place place;
    place.city = text(at(p, "city_name"));
    if (!place.city) place.city = text(at(p, "city"));
    place.state = text(at(p, "state_code"));
    if (!place.state) place.state = text(at(p, "state"));
    if (!place.state) place.state = text(at(p, "state_or_province_code"));
    place.country = text(at(p, "country_code"));
    if (!place.country) place.country = text(at(p, "country"));
    place.zip = text(at(p, "zip_code"));
    if (!place.zip) place.zip = text(at(p, "zip"));
    return place;
}

Obligations obligations_of(const Json& o) {
    return {money(at(o, "awards_obligated")), integer(at(o, "awards_count")), integer(at(o, "idv_count")),
            money(at(o, "subawards_obligated")), integer(at(o, "subawards_count"))};
}

Json j(const Text& t) { return t ? Json(*t) : Json(); }
Json j(const Money& m) { return m ? Json(*m) : Json(); }
Json j(const std::optional<int>& n) { return n ? Json(*n) : Json(); }
Json j(const std::optional<long long>& n) { return n ? Json(*n) : Json(); }
Json j(const std::optional<bool>& b) { return b ? Json(*b) : Json(); }
Json j(const Coded& c) {
    if (!c.code && !c.description) return nullptr;
    return {{"code", j(c.code)}, {"description", j(c.description)}};
}
Json j(const std::vector<Coded>& list) {
    Json out = Json::array();
    for (const auto& c : list) out.push_back(j(c));
    return out;
}
Json j(const Place& p) {
    if (!p.city && !p.state && !p.country && !p.zip) return nullptr;
    return {{"city", j(p.city)}, {"state", j(p.state)}, {"country", j(p.country)}, {"zip", j(p.zip)}};
}
Json j(const Agency& a) {
    if (!a.name && !a.code && !a.department && !a.office_name && !a.office_code) return nullptr;
    return {{"name", j(a.name)},
            {"code", j(a.code)},
            {"department", j(a.department)},
            {"office", {{"name", j(a.office_name)}, {"code", j(a.office_code)}}}};
}
Json j(const Obligations& o) {
    return {{"awards_obligated", j(o.awards_obligated)},
            {"awards_count", j(o.awards_count)},
            {"idv_count", j(o.idv_count)},
            {"subawards_obligated", j(o.subawards_obligated)},
            {"subawards_count", j(o.subawards_count)}};
}

// A set-aside with its description from our table when the API gave only the code.
Coded set_aside_of(const Json& v) {
    Coded c = coded(v);
    if (c.code && !c.description) {
        auto d = set_aside_description(*c.code);
        if (!d.empty()) c.description = d;
    }
    return c;
}

}  // namespace

std::string decode_html_entities(std::string_view text) {
    static const std::pair<const char*, const char*> kNamed[] = {
        {"amp", "&"},   {"lt", "<"},    {"gt", ">"},    {"quot", "\""}, {"apos", "'"},  {"nbsp", " "},
        {"ndash", "–"}, {"mdash", "—"}, {"rsquo", "’"}, {"lsquo", "‘"}, {"rdquo", "”"}, {"ldquo", "“"},
    };
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '&') {
            out += text[i];
            continue;
        }
        auto semi = text.find(';', i);
        if (semi == std::string_view::npos || semi - i > 10) {
            out += '&';
            continue;
        }
        auto name = text.substr(i + 1, semi - i - 1);
        bool done = false;
        if (!name.empty() && name[0] == '#') {
            unsigned long code = 0;
            try {
                code = name.size() > 1 && (name[1] == 'x' || name[1] == 'X')
                           ? std::stoul(std::string(name.substr(2)), nullptr, 16)
                           : std::stoul(std::string(name.substr(1)));
            } catch (const std::logic_error&) {
                code = 0;
            }
            if (code > 0 && code < 0x110000 && (code < 0xD800 || code > 0xDFFF)) {
                if (code < 0x80) out += static_cast<char>(code);
                else if (code < 0x800)
                    out += {static_cast<char>(0xC0 | (code >> 6)), static_cast<char>(0x80 | (code & 0x3F))};
                else if (code < 0x10000)
                    out += {static_cast<char>(0xE0 | (code >> 12)), static_cast<char>(0x80 | ((code >> 6) & 0x3F)),
                            static_cast<char>(0x80 | (code & 0x3F))};
                else
                    out += {static_cast<char>(0xF0 | (code >> 18)), static_cast<char>(0x80 | ((code >> 12) & 0x3F)),
                            static_cast<char>(0x80 | ((code >> 6) & 0x3F)), static_cast<char>(0x80 | (code & 0x3F))};
                done = true;
            }
        } else {
            for (const auto& [entity, replacement] : kNamed) {
                if (name == entity) {
                    out += replacement;
                    done = true;
                    break;
                }
            }
        }
        if (done) i = semi;
        else out += '&';
    }
    return out;
}

Contract parse_contract(const Json& r) {
    Contract c;
    c.key = text(at(r, "key"));
    c.piid = text(at(r, "piid"));
    c.description = text(at(r, "description"));
    c.award_date = date_of(at(r, "award_date"));
    if (auto fy = integer(at(r, "fiscal_year"))) c.fiscal_year = static_cast<int>(*fy);
    const Json& recipient = at(r, "recipient");
    c.vendor.name = text(at(recipient, "display_name"));
    if (!c.vendor.name) c.vendor.name = text(at(recipient, "legal_business_name"));
    c.vendor.uei = text(at(recipient, "uei"));
    c.awarding_agency = agency_of_office(at(r, "awarding_office"));
    c.obligated = money(at(r, "obligated"));
    c.total_contract_value = money(at(r, "total_contract_value"));
    c.naics = coded(at(r, "naics"));
    if (!c.naics.code) c.naics.code = text(at(r, "naics_code"));
    c.psc = coded(at(r, "psc"));
    if (!c.psc.code) c.psc.code = text(at(r, "psc_code"));
    c.set_aside = set_aside_of(at(r, "set_aside"));
    c.place_of_performance = place_of(at(r, "place_of_performance"));
    const Json& period = at(r, "period_of_performance");
    c.period_of_performance = {date_of(at(period, "start_date")), date_of(at(period, "current_end_date")),
                               date_of(at(period, "ultimate_completion_date"))};
    return c;
}

Json to_json(const Contract& c) {
    return {{"contract_id", j(c.key)},
            {"piid", j(c.piid)},
            {"description", j(c.description)},
            {"award_date", j(c.award_date)},
            {"fiscal_year", j(c.fiscal_year)},
            {"vendor", {{"name", j(c.vendor.name)}, {"uei", j(c.vendor.uei)}}},
            {"awarding_agency", j(c.awarding_agency)},
            {"obligated", j(c.obligated)},
            {"total_contract_value", j(c.total_contract_value)},
            {"naics", j(c.naics)},
            {"psc", j(c.psc)},
            {"set_aside", j(c.set_aside)},
            {"place_of_performance", j(c.place_of_performance)},
            {"period_of_performance",
             {{"start_date", j(c.period_of_performance.start_date)},
              {"end_date", j(c.period_of_performance.end_date)},
              {"ultimate_completion_date", j(c.period_of_performance.ultimate_completion)}}}};
}

Grant parse_grant(const Json& r) {
    Grant g;
    g.grant_id = integer(at(r, "grant_id"));
    g.opportunity_number = text(at(r, "opportunity_number"));
    if (auto t = text(at(r, "title"))) g.title = decode_html_entities(*t);
    g.agency_code = text(at(r, "agency_code"));
    g.status = coded(at(r, "status"));
    const Json& dates = at(r, "important_dates");
    g.posted_date = date_of(at(dates, "posted_date"));
    g.response_date = date_of(at(dates, "response_date"));
    g.cfda_numbers = coded_list(at(r, "cfda_numbers"), "number", "title");
    g.funding_instruments = coded_list(at(r, "funding_instruments"));
    g.funding_categories = coded_list(at(r, "funding_categories"));
    g.applicant_types = coded_list(at(r, "applicant_types"));
    const Json& funding = at(r, "funding_details");
    g.award_ceiling = money(at(funding, "award_ceiling"));
    g.award_floor = money(at(funding, "award_floor"));
    g.estimated_total_funding = money(at(funding, "estimated_total_funding"));
    g.expected_number_of_awards = integer(at(funding, "expected_number_of_awards"));
    return g;
}

Json to_json(const Grant& g) {
    return {{"grant_id", j(g.grant_id)},
            {"opportunity_number", j(g.opportunity_number)},
            {"title", j(g.title)},
            {"agency_code", j(g.agency_code)},
            {"status", j(g.status)},
            {"posted_date", j(g.posted_date)},
            {"response_date", j(g.response_date)},
            {"cfda_numbers", j(g.cfda_numbers)},
            {"funding_instruments", j(g.funding_instruments)},
            {"funding_categories", j(g.funding_categories)},
            {"applicant_types", j(g.applicant_types)},
            {"funding",
             {{"award_ceiling", j(g.award_ceiling)},
              {"award_floor", j(g.award_floor)},
              {"estimated_total_funding", j(g.estimated_total_funding)},
              {"expected_number_of_awards", j(g.expected_number_of_awards)}}}};
}

Opportunity parse_opportunity(const Json& r) {
    Opportunity o;
    o.opportunity_id = text(at(r, "opportunity_id"));
    o.title = text(at(r, "title"));
    o.solicitation_number = text(at(r, "solicitation_number"));
    const Json& notice_type = at(at(r, "meta"), "notice_type");
    o.notice_type = notice_type.is_object() ? text(at(notice_type, "type")) : text(notice_type);
    o.active = boolean(at(r, "active"));
    o.agency = agency_of_office(at(r, "office"));
    o.first_notice_date = date_of(at(r, "first_notice_date"));
    o.last_notice_date = date_of(at(r, "last_notice_date"));
    o.response_deadline = text(at(r, "response_deadline"));
    o.naics = {text(at(r, "naics_code")), std::nullopt};
    o.psc = {text(at(r, "psc_code")), std::nullopt};
    o.set_aside = set_aside_of(at(r, "set_aside"));
    o.place_of_performance = place_of(at(r, "place_of_performance"));
    o.sam_url = text(at(r, "sam_url"));
    if (auto d = text(at(r, "description"))) {
        if (d->size() > 500) {
            truncate_utf8(*d, 497);
            *d += "...";
        }
        o.description = std::move(*d);
    }
    return o;
}

Json to_json(const Opportunity& o) {
    return {{"opportunity_id", j(o.opportunity_id)},
            {"title", j(o.title)},
            {"solicitation_number", j(o.solicitation_number)},
            {"notice_type", j(o.notice_type)},
            {"active", j(o.active)},
            {"agency", j(o.agency)},
            {"first_notice_date", j(o.first_notice_date)},
            {"last_notice_date", j(o.last_notice_date)},
            {"response_deadline", j(o.response_deadline)},
            {"naics", j(o.naics)},
            {"psc", j(o.psc)},
            {"set_aside", j(o.set_aside)},
            {"place_of_performance", j(o.place_of_performance)},
            {"sam_url", j(o.sam_url)},
            {"description", j(o.description)}};
}

Forecast parse_forecast(const Json& r) {
    Forecast f;
    f.id = integer(at(r, "id"));
    f.title = text(at(r, "title"));
    const Json& agency = at(r, "agency");
    f.agency = agency.is_object() ? text(at(agency, "name")) : text(agency);
    f.source_system = text(at(r, "source_system"));
    f.anticipated_award_date = date_of(at(r, "anticipated_award_date"));
    if (auto fy = integer(at(r, "fiscal_year"))) f.fiscal_year = static_cast<int>(*fy);
    f.naics_code = text(at(r, "naics_code"));
    const Json& set_aside = at(r, "set_aside");
    f.set_aside = set_aside.is_object() ? text(at(set_aside, "code")) : text(set_aside);
    f.status = text(at(r, "status"));
    return f;
}

Json to_json(const Forecast& f) {
    return {{"forecast_id", j(f.id)},
            {"title", j(f.title)},
            {"agency", j(f.agency)},
            {"source_system", j(f.source_system)},
            {"anticipated_award_date", j(f.anticipated_award_date)},
            {"fiscal_year", j(f.fiscal_year)},
            {"naics_code", j(f.naics_code)},
            {"set_aside", j(f.set_aside)},
            {"status", j(f.status)}};
}

VendorProfile parse_vendor_profile(const Json& e) {
    VendorProfile v;
    v.uei = text(at(e, "uei"));
    v.legal_business_name = text(at(e, "legal_business_name"));
    if (!v.legal_business_name) v.legal_business_name = text(at(e, "display_name"));
    v.dba_name = text(at(e, "dba_name"));
    v.cage_code = text(at(e, "cage_code"));
    v.registered = boolean(at(e, "registered"));
    const Json& status = at(e, "registration_status");
    v.registration_status = status.is_boolean() ? Text(status.get<bool>() ? "active" : "inactive") : text(status);
    v.sam_activation_date = date_of(at(e, "sam_activation_date"));
    v.sam_expiration_date = date_of(at(e, "sam_expiration_date"));
    v.primary_naics = text(at(e, "primary_naics"));
    for (const auto& n : at(e, "naics_codes").is_array() ? at(e, "naics_codes") : Json::array()) {
        Coded c = n.is_object() ? Coded{text(at(n, "code")), text(at(n, "description"))} : Coded{text(n), std::nullopt};
        if (c.code) v.naics_codes.push_back(std::move(c));
    }
    for (const auto& p : at(e, "psc_codes").is_array() ? at(e, "psc_codes") : Json::array()) {
        if (auto code = p.is_object() ? text(at(p, "code")) : text(p)) v.psc_codes.push_back(*code);
    }
    v.business_types = coded_list(at(e, "business_types"));
    v.physical_address = place_of(at(e, "physical_address"));
    v.congressional_district = text(at(e, "congressional_district"));
    v.website = text(at(e, "entity_url"));
    v.description = text(at(e, "description"));
    const Json& obligations = at(e, "federal_obligations");
    v.obligations_total = obligations_of(at(obligations, "total"));
    v.obligations_active = obligations_of(at(obligations, "active"));
    return v;
}

Json to_json(const VendorProfile& v) {
    Json naics = j(v.naics_codes);
    return {{"uei", j(v.uei)},
            {"legal_business_name", j(v.legal_business_name)},
            {"dba_name", j(v.dba_name)},
            {"cage_code", j(v.cage_code)},
            {"registration",
             {{"registered", j(v.registered)},
              {"status", j(v.registration_status)},
              {"activation_date", j(v.sam_activation_date)},
              {"expiration_date", j(v.sam_expiration_date)}}},
            {"primary_naics", j(v.primary_naics)},
            {"naics_codes", std::move(naics)},
            {"psc_codes", v.psc_codes},
            {"business_types", j(v.business_types)},
            {"physical_address", j(v.physical_address)},
            {"congressional_district", j(v.congressional_district)},
            {"website", j(v.website)},
            {"description", j(v.description)},
            {"federal_obligations", {{"total", j(v.obligations_total)}, {"active", j(v.obligations_active)}}}};
}

}  // namespace toolport::tango
