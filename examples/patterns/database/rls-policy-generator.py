import json
import sys

args = json.load(sys.stdin)
table = args["table"]
column = args.get("tenantColumn", "tenant_id")
statements = [
    f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY;",
    f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY;",
]
for command in ("SELECT", "INSERT", "UPDATE", "DELETE"):
    clause = "WITH CHECK" if command == "INSERT" else "USING"
    statements.append(
        f"CREATE POLICY {table}_{command.lower()}_tenant ON {table} FOR {command} "
        f"{clause} ({column} = current_setting('app.tenant_id')::uuid);"
    )
print(json.dumps({"statements": statements}))
