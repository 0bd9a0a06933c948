import Foundation
import MajlisProtocol
import Testing

/// The one JSON parser everything from outside goes through: the same values Foundation reads,
/// strict where RFC 8259 is, nesting bounded, work linear in the input.
@Suite struct JSONParserTests {
    /// A random value of at most `depth` levels.
    static func randomValue(_ random: inout SplitMix64, depth: Int) -> JSONValue {
        let kind = depth == 0 ? random.next() % 5 : random.next() % 7
        switch kind {
        case 0: return .null
        case 1: return .bool(random.next() % 2 == 0)
        case 2: return .int(Int64(bitPattern: random.next()) >> Int64(random.next() % 64))
        case 3: return .double(Double(Int64(bitPattern: random.next()) % 1_000_000) / 1_000)
        case 4:
            let scalars: [Unicode.Scalar] = ["a", "\"", "\\", "/", "\n", "\t", "\u{0}", "\u{1F}", "é", "م", "你", "😀", "\u{7F}"]
            return .string(String(String.UnicodeScalarView((0..<(random.next() % 12)).map { _ in scalars[Int(random.next() % UInt64(scalars.count))] })))
        case 5: return .array((0..<(random.next() % 4)).map { _ in randomValue(&random, depth: depth - 1) })
        default:
            var members: [String: JSONValue] = [:]
            for index in 0..<(random.next() % 4) { members["k\(index)\(random.next() % 3 == 0 ? "é" : "")"] = randomValue(&random, depth: depth - 1) }
            return .object(members)
        }
    }

    @Test func readsWhatFoundationWritesAsFoundationReadsIt() throws {
        var random = SplitMix64(seed: 7)
        for _ in 0..<2_000 {
            let value = Self.randomValue(&random, depth: 6)
            let text = try JSONEncoder().encode(value)
            let parsed = try JSONParser().parse(text)
            #expect(parsed == (try JSONDecoder().decode(JSONValue.self, from: text)), "\(String(decoding: text, as: UTF8.self))")
            #expect(try JSONParser().parse(JSONEncoder().encode(parsed)) == parsed)
        }
    }

    @Test func readsTheForms() throws {
        let parser = JSONParser()
        #expect(try parser.parse(#" { "a" : [ 1 , -2.5e3 , true , false , null , "\u00e9\ud83d\ude00\n" ] } "#)
            == ["a": [1, -2500.0, true, false, nil, "é😀\n"]])
        #expect(try parser.parse("9223372036854775807") == .int(.max))
        #expect(try parser.parse("-9223372036854775808") == .int(.min))
        #expect(try parser.parse("9223372036854775808") == .double(9_223_372_036_854_775_808))
        #expect(try parser.parse("1.0") == .double(1))
        #expect(try parser.parse(#"{"a":1,"a":2}"#) == ["a": 2])
        #expect(try parser.parse(#""\u0000""#) == "\u{0}")
    }

    @Test(arguments: [
        "", " ", "{", "[1,]", "{\"a\":1,}", "01", "-", "1.", ".5", "1e", "+1", "NaN", "Infinity", "tru", "nul", "[1 2]",
        "{\"a\" 1}", "{1:2}", "\"\u{1}\"", "\"\\x\"", "\"\\u12\"", "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"", "1 2", "[]]", "1e999",
        "\"abc", "// c\n1", "'a'",
    ])
    func refusesWhatIsNotJSON(_ text: String) {
        #expect(throws: JSONParser.Failure.self) { try JSONParser().parse(text) }
    }

    @Test func refusesBytesThatAreNotUTF8() {
        #expect(throws: JSONParser.Failure.self) { try JSONParser().parse([0x22, 0xFF, 0x22]) }
        #expect(throws: JSONParser.Failure.self) { try JSONParser().parse([0x22, 0xC3, 0x22]) }
        #expect(throws: JSONParser.Failure.self) { try JSONParser().parse([0x22, 0x5C, 0x6E, 0xED, 0xA0, 0x80, 0x22]) }
    }

    @Test func nestingIsBounded() throws {
        let parser = JSONParser()
        func nested(_ depth: Int, _ open: String = "[", _ close: String = "]") -> String {
            String(repeating: open, count: depth) + String(repeating: close, count: depth)
        }
        #expect(try parser.parse(nested(32)) != .null)
        #expect { try parser.parse(nested(33)) } throws: { ($0 as? JSONParser.Failure)?.message == "nested deeper than 32 levels" }
        #expect(throws: JSONParser.Failure.self) { try parser.parse(nested(100_000)) }
        let objects = String(repeating: #"{"a":"#, count: 33) + "1" + String(repeating: "}", count: 33)
        #expect(throws: JSONParser.Failure.self) { try parser.parse(objects) }
        #expect(try JSONParser(maxDepth: 200).parse(nested(200)) != .null)
        // Through any Decoder too (Foundation's), the value's own nesting is bounded.
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(JSONValue.self, from: Data(nested(200).utf8)) }
        #expect(try JSONDecoder().decode(JSONValue.self, from: Data(nested(20).utf8)) != .null)
    }

    @Test func valuesAreCountedWhereAsked() throws {
        let text = "[" + Array(repeating: "1", count: 4_095).joined(separator: ",") + "]"
        #expect(try JSONParser(maxValues: 4_096).parse(text) != .null)
        let more = "[" + Array(repeating: #"{"k":"v"}"#, count: 2_048).joined(separator: ",") + "]"
        #expect { try JSONParser(maxValues: 4_096).parse(more) } throws: { ($0 as? JSONParser.Failure)?.message == "more than 4096 values" }
        #expect(try JSONParser().parse(more) != .null)
    }

    /// The work is the input's length: every byte is looked at a bounded number of times, so
    /// a wide, deep or long input costs what its size says. Counted, not timed: the values
    /// made are at most one per byte or two.
    @Test func theWorkIsLinear() throws {
        let wide = "[" + Array(repeating: "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]", count: 1_000).joined(separator: ",") + "]"
        let parsed = try JSONParser().parse(wide)
        func count(_ value: JSONValue) -> Int {
            switch value {
            case .array(let items): return 1 + items.reduce(0) { $0 + count($1) }
            case .object(let members): return 1 + members.values.reduce(0) { $0 + count($1) }
            default: return 1
            }
        }
        #expect(count(parsed) == 1 + 1_000 * 31)
        let long = "\"" + String(repeating: "\\u00e9", count: 50_000) + "\""
        #expect(try JSONParser().parse(long).stringValue?.count == 50_000)
    }
}
