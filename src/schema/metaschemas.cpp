// The meta-schemas of draft-07 and draft 2020-12, as published by json-schema.org (they are
// part of the specifications). They are built in so that "$schema" URIs and $refs to the
// meta-schemas (e.g. {"$ref": "https://json-schema.org/draft/2020-12/schema"} to validate a
// schema) resolve offline: the validator never fetches anything.

#include "schema/internal.hpp"

namespace toolport::schema::detail {

const std::vector<BuiltinDocument>& builtin_documents() {
    static const std::vector<BuiltinDocument> documents = [] {
        std::vector<BuiltinDocument> docs;
        docs.push_back({"http://json-schema.org/draft-07/schema", Json::parse(R"json(
{
  "$schema": "http://json-schema.org/draft-07/schema#",
  "$id": "http://json-schema.org/draft-07/schema#",
  "title": "Core schema meta-schema",
  "definitions": {
    "schemaArray": {
      "type": "array",
      "minItems": 1,
      "items": {
        "$ref": "#"
      }
    },
    "nonNegativeInteger": {
      "type": "integer",
      "minimum": 0
    },
    "nonNegativeIntegerDefault0": {
      "allOf": [
        {
          "$ref": "#/definitions/nonNegativeInteger"
        },
        {
          "default": 0
        }
      ]
    },
    "simpleTypes": {
      "enum": [
        "array",
        "boolean",
        "integer",
        "null",
        "number",
        "object",
        "string"
      ]
    },
    "stringArray": {
      "type": "array",
      "items": {
        "type": "string"
      },
      "uniqueItems": true,
      "default": []
    }
  },
  "type": [
    "object",
    "boolean"
  ],
  "properties": {
    "$id": {
      "type": "string",
      "format": "uri-reference"
    },
    "$schema": {
      "type": "string",
      "format": "uri"
    },
    "$ref": {
      "type": "string",
      "format": "uri-reference"
    },
    "$comment": {
      "type": "string"
    },
    "title": {
      "type": "string"
    },
    "description": {
      "type": "string"
    },
    "default": true,
    "readOnly": {
      "type": "boolean",
      "default": false
    },
    "examples": {
      "type": "array",
      "items": true
    },
    "multipleOf": {
      "type": "number",
      "exclusiveMinimum": 0
    },
    "maximum": {
      "type": "number"
    },
    "exclusiveMaximum": {
      "type": "number"
    },
    "minimum": {
      "type": "number"
    },
    "exclusiveMinimum": {
      "type": "number"
    },
    "maxLength": {
      "$ref": "#/definitions/nonNegativeInteger"
    },
    "minLength": {
      "$ref": "#/definitions/nonNegativeIntegerDefault0"
    },
    "pattern": {
      "type": "string",
      "format": "regex"
    },
    "additionalItems": {
      "$ref": "#"
    },
    "items": {
      "anyOf": [
        {
          "$ref": "#"
        },
        {
          "$ref": "#/definitions/schemaArray"
        }
      ],
      "default": true
    },
    "maxItems": {
      "$ref": "#/definitions/nonNegativeInteger"
    },
    "minItems": {
      "$ref": "#/definitions/nonNegativeIntegerDefault0"
    },
    "uniqueItems": {
      "type": "boolean",
      "default": false
    },
    "contains": {
      "$ref": "#"
    },
    "maxProperties": {
      "$ref": "#/definitions/nonNegativeInteger"
    },
    "minProperties": {
      "$ref": "#/definitions/nonNegativeIntegerDefault0"
    },
    "required": {
      "$ref": "#/definitions/stringArray"
    },
    "additionalProperties": {
      "$ref": "#"
    },
    "definitions": {
      "type": "object",
      "additionalProperties": {
        "$ref": "#"
      },
      "default": {}
    },
    "properties": {
      "type": "object",
      "additionalProperties": {
        "$ref": "#"
      },
      "default": {}
    },
    "patternProperties": {
      "type": "object",
      "additionalProperties": {
        "$ref": "#"
      },
      "propertyNames": {
        "format": "regex"
      },
      "default": {}
    },
    "dependencies": {
      "type": "object",
      "additionalProperties": {
        "anyOf": [
          {
            "$ref": "#"
          },
          {
            "$ref": "#/definitions/stringArray"
          }
        ]
      }
    },
    "propertyNames": {
      "$ref": "#"
    },
    "const": true,
    "enum": {
      "type": "array",
      "items": true
    },
    "type": {
      "anyOf": [
        {
          "$ref": "#/definitions/simpleTypes"
        },
        {
          "type": "array",
          "items": {
            "$ref": "#/definitions/simpleTypes"
          },
          "minItems": 1,
          "uniqueItems": true
        }
      ]
    },
    "format": {
      "type": "string"
    },
    "contentMediaType": {
      "type": "string"
    },
    "contentEncoding": {
      "type": "string"
    },
    "if": {
      "$ref": "#"
    },
    "then": {
      "$ref": "#"
    },
    "else": {
      "$ref": "#"
    },
    "allOf": {
      "$ref": "#/definitions/schemaArray"
    },
    "anyOf": {
      "$ref": "#/definitions/schemaArray"
    },
    "oneOf": {
      "$ref": "#/definitions/schemaArray"
    },
    "not": {
      "$ref": "#"
    }
  },
  "default": true
}
)json")});
        docs.push_back({"https://json-schema.org/draft/2020-12/schema", Json::parse(R"json(
{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://json-schema.org/draft/2020-12/schema",
  "$vocabulary": {
    "https://json-schema.org/draft/2020-12/vocab/core": true,
    "https://json-schema.org/draft/2020-12/vocab/applicator": true,
    "https://json-schema.org/draft/2020-12/vocab/unevaluated": true,
    "https://json-schema.org/draft/2020-12/vocab/validation": true,
    "https://json-schema.org/draft/2020-12/vocab/meta-data": true,
    "https://json-schema.org/draft/2020-12/vocab/format-annotation": true,
    "https://json-schema.org/draft/2020-12/vocab/content": true
  },
  "$dynamicAnchor": "meta",
  "title": "Core and Validation specifications meta-schema",
  "allOf": [
    {
      "$ref": "meta/core"
    },
    {
      "$ref": "meta/applicator"
    },
    {
      "$ref": "meta/unevaluated"
    },
    {
      "$ref": "meta/validation"
    },
    {
      "$ref": "meta/meta-data"
    },
    {
      "$ref": "meta/format-annotation"
    },
    {
      "$ref": "meta/content"
    }
  ],
  "type": [
    "object",
    "boolean"
  ],
  "$comment": "This meta-schema also defines keywords that have appeared in previous drafts in order to prevent incompatible extensions as they remain in common use.",
  "properties": {
    "definitions": {
      "$comment": "\"definitions\" has been replaced by \"$defs\".",
      "type": "object",
      "additionalProperties": {
        "$dynamicRef": "#meta"
      },
      "deprecated": true,
      "default": {}
    },
    "dependencies": {
      "$comment": "\"dependencies\" has been split and replaced by \"dependentSchemas\" and \"dependentRequired\" in order to serve their differing semantics.",
      "type": "object",
      "additionalProperties": {
        "anyOf": [
          {
            "$dynamicRef": "#meta"
          },
          {
            "$ref": "meta/validation#/$defs/stringArray"
          }
        ]
      },
      "deprecated": true,
      "default": {}
    },
    "$recursiveAnchor": {
      "$comment": "\"$recursiveAnchor\" has been replaced by \"$dynamicAnchor\".",
      "$ref": "meta/core#/$defs/anchorString",
      "deprecated": true
    },
    "$recursiveRef": {
      "$comment": "\"$recursiveRef\" has been replaced by \"$dynamicRef\".",
      "$ref": "meta/core#/$defs/uriReferenceString",
      "deprecated": true
    }
  }
}
)json")});
        docs.push_back({"https://json-schema.org/draft/2020-12/meta/core", Json::parse(R"json(
{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://json-schema.org/draft/2020-12/meta/core",
  "$vocabulary": {
    "https://json-schema.org/draft/2020-12/vocab/core": true
  },
  "$dynamicAnchor": "meta",
  "title": "Core vocabulary meta-schema",
  "type": [
    "object",
    "boolean"
  ],
  "properties": {
    "$id": {
      "$ref": "#/$defs/uriReferenceString",
      "$comment": "Non-empty fragments not allowed.",
      "pattern": "^[^#]*#?$"
    },
    "$schema": {
      "$ref": "#/$defs/uriString"
    },
    "$ref": {
      "$ref": "#/$defs/uriReferenceString"
    },
    "$anchor": {
      "$ref": "#/$defs/anchorString"
    },
    "$dynamicRef": {
      "$ref": "#/$defs/uriReferenceString"
    },
    "$dynamicAnchor": {
      "$ref": "#/$defs/anchorString"
    },
    "$vocabulary": {
      "type": "object",
      "propertyNames": {
        "$ref": "#/$defs/uriString"
      },
      "additionalProperties": {
        "type": "boolean"
      }
    },
    "$comment": {
      "type": "string"
    },
    "$defs": {
      "type": "object",
      "additionalProperties": {
        "$dynamicRef": "#meta"
      }
    }
  },
  "$defs": {
    "anchorString": {
      "type": "string",
      "pattern": "^[A-Za-z_][-A-Za-z0-9._]*$"
    },
    "uriString": {
      "type": "string",
      "format": "uri"
    },
    "uriReferenceString": {
      "type": "string",
      "format": "uri-reference"
    }
  }
}
)json")});
        docs.push_back({"https://json-schema.org/draft/2020-12/meta/applicator", Json::parse(R"json(
{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://json-schema.org/draft/2020-12/meta/applicator",
  "$vocabulary": {
    "https://json-schema.org/draft/2020-12/vocab/applicator": true
  },
  "$dynamicAnchor": "meta",
  "title": "Applicator vocabulary meta-schema",
  "type": [
    "object",
    "boolean"
  ],
  "properties": {
    "prefixItems": {
      "$ref": "#/$defs/schemaArray"
    },
    "items": {
      "$dynamicRef": "#meta"
    },
    "contains": {
      "$dynamicRef": "#meta"
    },
    "additionalProperties": {
      "$dynamicRef": "#meta"
    },
    "properties": {
      "type": "object",
      "additionalProperties": {
        "$dynamicRef": "#meta"
      },
      "default": {}
    },
    "patternProperties": {
      "type": "object",
      "additionalProperties": {
        "$dynamicRef": "#meta"
      },
      "propertyNames": {
        "format": "regex"
      },
      "default": {}
    },
    "dependentSchemas": {
      "type": "object",
      "additionalProperties": {
        "$dynamicRef": "#meta"
      },
      "default": {}
    },
    "propertyNames": {
      "$dynamicRef": "#meta"
    },
    "if": {
      "$dynamicRef": "#meta"
    },
    "then": {
      "$dynamicRef": "#meta"
    },
    "else": {
      "$dynamicRef": "#meta"
    },
    "allOf": {
      "$ref": "#/$defs/schemaArray"
    },
    "anyOf": {
      "$ref": "#/$defs/schemaArray"
    },
    "oneOf": {
      "$ref": "#/$defs/schemaArray"
    },
    "not": {
      "$dynamicRef": "#meta"
    }
  },
  "$defs": {
    "schemaArray": {
      "type": "array",
      "minItems": 1,
      "items": {
        "$dynamicRef": "#meta"
      }
    }
  }
}
)json")});
        docs.push_back({"https://json-schema.org/draft/2020-12/meta/unevaluated", Json::parse(R"json(
{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://json-schema.org/draft/2020-12/meta/unevaluated",
  "$vocabulary": {
    "https://json-schema.org/draft/2020-12/vocab/unevaluated": true
  },
  "$dynamicAnchor": "meta",
  "title": "Unevaluated applicator vocabulary meta-schema",
  "type": [
    "object",
    "boolean"
  ],
  "properties": {
    "unevaluatedItems": {
      "$dynamicRef": "#meta"
    },
    "unevaluatedProperties": {
      "$dynamicRef": "#meta"
    }
  }
}
)json")});
        docs.push_back({"https://json-schema.org/draft/2020-12/meta/validation", Json::parse(R"json(
{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://json-schema.org/draft/2020-12/meta/validation",
  "$vocabulary": {
    "https://json-schema.org/draft/2020-12/vocab/validation": true
  },
  "$dynamicAnchor": "meta",
  "title": "Validation vocabulary meta-schema",
  "type": [
    "object",
    "boolean"
  ],
  "properties": {
    "type": {
      "anyOf": [
        {
          "$ref": "#/$defs/simpleTypes"
        },
        {
          "type": "array",
          "items": {
            "$ref": "#/$defs/simpleTypes"
          },
          "minItems": 1,
          "uniqueItems": true
        }
      ]
    },
    "const": true,
    "enum": {
      "type": "array",
      "items": true
    },
    "multipleOf": {
      "type": "number",
      "exclusiveMinimum": 0
    },
    "maximum": {
      "type": "number"
    },
    "exclusiveMaximum": {
      "type": "number"
    },
    "minimum": {
      "type": "number"
    },
    "exclusiveMinimum": {
      "type": "number"
    },
    "maxLength": {
      "$ref": "#/$defs/nonNegativeInteger"
    },
    "minLength": {
      "$ref": "#/$defs/nonNegativeIntegerDefault0"
    },
    "pattern": {
      "type": "string",
      "format": "regex"
    },
    "maxItems": {
      "$ref": "#/$defs/nonNegativeInteger"
    },
    "minItems": {
      "$ref": "#/$defs/nonNegativeIntegerDefault0"
    },
    "uniqueItems": {
      "type": "boolean",
      "default": false
    },
    "maxContains": {
      "$ref": "#/$defs/nonNegativeInteger"
    },
    "minContains": {
      "$ref": "#/$defs/nonNegativeInteger",
      "default": 1
    },
    "maxProperties": {
      "$ref": "#/$defs/nonNegativeInteger"
    },
    "minProperties": {
      "$ref": "#/$defs/nonNegativeIntegerDefault0"
    },
    "required": {
      "$ref": "#/$defs/stringArray"
    },
    "dependentRequired": {
      "type": "object",
      "additionalProperties": {
        "$ref": "#/$defs/stringArray"
      }
    }
  },
  "$defs": {
    "nonNegativeInteger": {
      "type": "integer",
      "minimum": 0
    },
    "nonNegativeIntegerDefault0": {
      "$ref": "#/$defs/nonNegativeInteger",
      "default": 0
    },
    "simpleTypes": {
      "enum": [
        "array",
        "boolean",
        "integer",
        "null",
        "number",
        "object",
        "string"
      ]
    },
    "stringArray": {
      "type": "array",
      "items": {
        "type": "string"
      },
      "uniqueItems": true,
      "default": []
    }
  }
}
)json")});
        docs.push_back({"https://json-schema.org/draft/2020-12/meta/meta-data", Json::parse(R"json(
{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://json-schema.org/draft/2020-12/meta/meta-data",
  "$vocabulary": {
    "https://json-schema.org/draft/2020-12/vocab/meta-data": true
  },
  "$dynamicAnchor": "meta",
  "title": "Meta-data vocabulary meta-schema",
  "type": [
    "object",
    "boolean"
  ],
  "properties": {
    "title": {
      "type": "string"
    },
    "description": {
      "type": "string"
    },
    "default": true,
    "deprecated": {
      "type": "boolean",
      "default": false
    },
    "readOnly": {
      "type": "boolean",
      "default": false
    },
    "writeOnly": {
      "type": "boolean",
      "default": false
    },
    "examples": {
      "type": "array",
      "items": true
    }
  }
}
)json")});
        docs.push_back({"https://json-schema.org/draft/2020-12/meta/format-annotation", Json::parse(R"json(
{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://json-schema.org/draft/2020-12/meta/format-annotation",
  "$vocabulary": {
    "https://json-schema.org/draft/2020-12/vocab/format-annotation": true
  },
  "$dynamicAnchor": "meta",
  "title": "Format vocabulary meta-schema for annotation results",
  "type": [
    "object",
    "boolean"
  ],
  "properties": {
    "format": {
      "type": "string"
    }
  }
}
)json")});
        docs.push_back({"https://json-schema.org/draft/2020-12/meta/format-assertion", Json::parse(R"json(
{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://json-schema.org/draft/2020-12/meta/format-assertion",
  "$vocabulary": {
    "https://json-schema.org/draft/2020-12/vocab/format-assertion": true
  },
  "$dynamicAnchor": "meta",
  "title": "Format vocabulary meta-schema for assertion results",
  "type": [
    "object",
    "boolean"
  ],
  "properties": {
    "format": {
      "type": "string"
    }
  }
}
)json")});
        docs.push_back({"https://json-schema.org/draft/2020-12/meta/content", Json::parse(R"json(
{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://json-schema.org/draft/2020-12/meta/content",
  "$vocabulary": {
    "https://json-schema.org/draft/2020-12/vocab/content": true
  },
  "$dynamicAnchor": "meta",
  "title": "Content vocabulary meta-schema",
  "type": [
    "object",
    "boolean"
  ],
  "properties": {
    "contentEncoding": {
      "type": "string"
    },
    "contentMediaType": {
      "type": "string"
    },
    "contentSchema": {
      "$dynamicRef": "#meta"
    }
  }
}
)json")});
        return docs;
    }();
    return documents;
}

}  // namespace toolport::schema::detail
