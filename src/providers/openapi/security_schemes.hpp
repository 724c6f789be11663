// The security schemes of a document (components.securitySchemes) as Toolport sends them,
// each with the environment variable that holds its secret. Secrets are read when a call
// is made (request_builder), never stored here and never logged.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "providers/openapi/openapi_document.hpp"

namespace toolport::openapi {

struct SecurityScheme {
    enum class Kind { api_key_header, api_key_query, api_key_cookie, bearer, basic };
    Kind kind = Kind::bearer;
    std::string parameter;  // apiKey: the header, query or cookie name
    std::string env_var;    // the environment variable holding its secret (basic: "user:password")
};
using SecuritySchemes = std::map<std::string, SecurityScheme>;

// "<SOURCE>_<SCHEME>" upper-cased, every character but A-Z 0-9 as '_'
// (petstore + api_key → PETSTORE_API_KEY).
std::string default_credential_env(const std::string& source, const std::string& scheme);

// components.securitySchemes: apiKey (header, query, cookie), http bearer and basic, and
// oauth2 / openIdConnect as a bearer token from the environment. `credential_env` names
// the variable of a scheme (else default_credential_env). Other kinds are left out with a
// warning (operations needing only them answer MISSING_API_KEY).
SecuritySchemes read_security_schemes(const DocumentSet& docs, const std::string& source,
                                      const std::map<std::string, std::string>& credential_env,
                                      std::vector<std::string>& warnings);

}  // namespace toolport::openapi
