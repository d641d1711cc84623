import Foundation
import Testing
import TermhostRegistry

/// The JSON Schema subset of tools.h: which schemas a tool may declare, and the wording of a
/// call's arguments that do not match, word for word.
@Suite struct ToolSchemaTests {
    func json(_ text: String) throws -> JSONValue { try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) }

    @Test(arguments: [
        (#"[1]"#, "is not a JSON object"),
        (#"{"type": "string"}"#, #"must be an object schema ("type": "object")"#),
        (#"{"type": "object", "oneOf": []}"#, "uses 'oneOf', which the host does not check (it supports additionalProperties, description, enum, items, maxLength, maximum, minimum, properties, required, type)"),
        (#"{"type": "object", "properties": {"a": {"type": "text"}}}"#, #"has a "type" at a that is not one of array, boolean, integer, null, number, object, string"#),
        (#"{"type": "object", "properties": {"a": {"maxLength": -1}}}"#, #"has a "maxLength" at a that is not a whole number from 0"#),
        (#"{"type": "object", "properties": {"a": {"minimum": "1"}}}"#, #"has a "minimum" at a that is not a number"#),
        (#"{"type": "object", "properties": {"a": {"enum": []}}}"#, #"has an "enum" at a that is not a non-empty array"#),
        (#"{"type": "object", "properties": {}, "required": ["a"]}"#, #"requires "a", which is not one of its "properties""#),
        (#"{"type": "object", "properties": {"a": {"type": "array", "items": {"format": "x"}}}}"#, "uses 'format' at a[*], which the host does not check (it supports additionalProperties, description, enum, items, maxLength, maximum, minimum, properties, required, type)"),
    ])
    func aSchemaOutsideTheSubsetIsRefusedNamingWhy(schema: String, problem: String) throws {
        #expect(ToolSchema.problem(try json(schema)) == problem)
    }

    @Test func deepSchemasAreRefusedNotRecursedWithoutBound() throws {
        var schema = #"{"type": "string"}"#
        for _ in 0..<40 { schema = #"{"type": "object", "properties": {"a": \#(schema)}}"# }
        #expect(ToolSchema.problem(try json(schema))?.hasPrefix("nests deeper than 32 levels at a.a.a") == true)
    }

    @Test func argumentsAreCheckedAndTheFirstMismatchIsNamed() throws {
        let schema = try json(#"""
        {"type": "object", "properties": {
            "host": {"type": "string", "maxLength": 4},
            "ports": {"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": 65535}},
            "options": {"type": "object", "properties": {"user": {"type": ["string", "null"]}}, "additionalProperties": false}},
         "required": ["host"], "additionalProperties": false}
        """#)
        #expect(ToolSchema.problem(schema) == nil)
        let cases: [(String, String?)] = [
            (#"{"host": "web2"}"#, nil),
            (#"{"host": "web2", "ports": [22, 2222], "options": {"user": null}}"#, nil),
            (#"{"host": "web-2"}"#, "argument 'host' is 5 characters, more than the 4 it may have"),
            (#"{"host": "é日本語"}"#, nil),
            (#"{"host": "a", "ports": [22, 0]}"#, "argument 'ports[1]' must be at least 1, not 0"),
            (#"{"host": "a", "ports": [70000]}"#, "argument 'ports[0]' must be at most 65535, not 70000"),
            (#"{"host": "a", "options": {"user": 5}}"#, "argument 'options.user' must be a string or null, not an integer"),
            (#"{"host": "a", "options": {"group": "x"}}"#, "argument 'options.group' is not one this tool takes (it takes user)"),
            (#"{"ports": []}"#, "argument 'host' is missing (it is required)"),
            (#"{"host": "a", "host\u001b[2J": 1}"#, #"argument 'host\033[2J' is not one this tool takes (it takes host, options, ports)"#),
            (#""host""#, "the arguments must be a JSON object, not a string"),
        ]
        for (arguments, expected) in cases {
            #expect(ToolSchema.mismatch(try json(arguments), against: schema) == expected, "\(arguments)")
        }
    }

    @Test func toolNamesFollowTheSyntaxProvidersAccept() {
        #expect(ToolDescriptor.isValidName("ssh_exec") && ToolDescriptor.isValidName("a") && ToolDescriptor.isValidName("get_metrics2"))
        #expect(!ToolDescriptor.isValidName("") && !ToolDescriptor.isValidName("2fa") && !ToolDescriptor.isValidName("ssh-exec")
                && !ToolDescriptor.isValidName("SSH") && !ToolDescriptor.isValidName("_x"))
        #expect(ToolDescriptor.isValidName(String(repeating: "a", count: 64)) && !ToolDescriptor.isValidName(String(repeating: "a", count: 65)))
        let long = ToolDescriptor(name: String(repeating: "a", count: 65), description: "d", inputSchema: .object(["type": .string("object")]), readOnly: true)
        #expect(long.problem == "its name is 65 bytes, more than the 64 a tool name may have")
    }

    @Test func resolutionRefusesBadScopedAndClashingToolsOneByOne() throws {
        let schema = try json(#"{"type": "object"}"#)
        let good = ToolDescriptor(name: "list_hosts", description: "Lists hosts.", inputSchema: schema, readOnly: true)
        var registry = FeatureRegistry()
        try registry.register(FeatureDescriptor(id: try FeatureID("org.a.first"), order: 1, tools: [good], source: "a"))
        try registry.register(FeatureDescriptor(id: try FeatureID("org.b.second"), order: 2,
                                                tools: [good, ToolDescriptor(name: "other", description: " ", inputSchema: schema, readOnly: false)],
                                                source: "b"))
        try registry.register(FeatureDescriptor(id: try FeatureID("org.c.scene"), order: 3, scope: .scene,
                                                tools: [ToolDescriptor(name: "scened", description: "x", inputSchema: schema, readOnly: true)],
                                                source: "c"))
        let r = registry.resolve(EffectivePolicy(), hostServices: [])
        #expect(r.toolOwners == ["list_hosts": try FeatureID("org.a.first")])
        #expect(r.tools.map(\.tool.name) == ["list_hosts"])
        #expect(r.problems.map(\.description) == [
            "tool 'list_hosts' is offered by both 'org.a.first' and 'org.b.second'; 'org.a.first' keeps it and the one of 'org.b.second' was refused",
            "feature 'org.b.second' offers tool 'other', refused: it has no description (the model chooses tools by it)",
            "feature 'org.c.scene' offers tool 'scened', refused: only process-scope features may offer tools, and it is scene-scope",
        ])
        #expect(r.enabled.count == 3, "a refused tool never stops its feature")
    }
}
