import Foundation
import MajlisProtocol
import Testing

/// The streaming encoder writes what JSONEncoder writes (read back, they are the same JSON), and
/// refuses what it cannot stream rather than write it wrong.
@Suite struct StreamingJSONEncoderTests {
    static func foundation(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        return try encoder.encode(value)
    }

    static func same(_ value: some Encodable, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let streamed = try StreamingJSONEncoder.encode(value)
        let reference = try foundation(value)
        let ours = try JSONDecoder().decode(JSONValue.self, from: streamed)
        let theirs = try JSONDecoder().decode(JSONValue.self, from: reference)
        #expect(ours == theirs, "\(String(decoding: streamed, as: UTF8.self)) against \(String(decoding: reference, as: UTF8.self))", sourceLocation: sourceLocation)
    }

    struct Numbers: Encodable {
        var int = Int.min
        var int64 = Int64.max
        var uint64 = UInt64.max
        var small: Int8 = -7
        var zero = 0
        var doubles = [0.0, -0.0, 1.0, -2.5, 0.1, 1e-7, 1.5e300, 123_456_789.125, 1e16]
        var float: Float = 0.1
        var optional: Int? = nil
        var present: Int? = 3
    }

    @Test func numbersAndOptionals() throws {
        try Self.same(Numbers())
        #expect(String(decoding: try StreamingJSONEncoder.encode([1.0, 2.5]), as: UTF8.self) == "[1,2.5]")
        #expect(String(decoding: try StreamingJSONEncoder.encode(Numbers()), as: UTF8.self).contains("\"optional\"") == false)
    }

    @Test func everyStringEscape() throws {
        let control = String(decoding: (0..<0x20).map { UInt8($0) }, as: UTF8.self)
        let strings = [control, "\"quoted\" \\ back/slash", "مجلس 🎙️ voice", "", "\u{7F}\u{2028}\u{FEFF}"]
        try Self.same(strings)
        try Self.same(["k\"ey\n": strings])
        #expect(String(decoding: try StreamingJSONEncoder.encode("a/b\u{1}"), as: UTF8.self) == #""a/b\u0001""#)
    }

    @Test func nestedValuesAndWireTypes() throws {
        let value: JSONValue = ["a": [1, 2.5, "x", nil, true, ["b": [:], "c": []]], "d": .object([:])]
        try Self.same(value)
        try Self.same([[[Int]]]([[[]], [[1], [2, 3]]]))
        try Self.same(["x": ["y": ["z": 1]]])
        let member = Member(id: "u1", name: "Omar \"O\"", avatar: "https://a/b.png", role: .admin, seat: 2, chatMuted: false, joinedAt: 1_700_000_000_000)
        try Self.same(member)
        try Self.same(EventFrame(room: "r", seq: 4, event: .memberJoined(member)))
        try Self.same(EventFrame(room: nil, seq: nil, event: .speakerLevels([SpeakerLevel(user: "s0", level: 76, vad: true)])))
    }

    /// A value that writes to its own container after a nested one: fine, the nested one is closed.
    struct Interleaved: Encodable {
        enum Keys: String, CodingKey { case a, b, c }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            var nested = container.nestedUnkeyedContainer(forKey: .a)
            try nested.encode(1)
            try nested.encode("two")
            try container.encode(3, forKey: .b)
            var object = container.nestedContainer(keyedBy: Keys.self, forKey: .c)
            try object.encode(true, forKey: .a)
        }
    }

    /// One that goes back to a nested container after its parent moved on: it cannot be streamed.
    struct GoesBack: Encodable {
        enum Keys: String, CodingKey { case a, b }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            var nested = container.nestedUnkeyedContainer(forKey: .a)
            try container.encode(3, forKey: .b)
            try nested.encode(1)
        }
    }

    @Test func containersInTheUsualOrderAndRefusalsOtherwise() throws {
        try Self.same(Interleaved())
        #expect(throws: StreamingJSONEncoder.Unsupported.self) { try StreamingJSONEncoder.encode(GoesBack()) }
        #expect(throws: StreamingJSONEncoder.Unsupported.self) { try StreamingJSONEncoder.encode(["d": Data([1, 2])]) }
        #expect(throws: StreamingJSONEncoder.Unsupported.self) { try StreamingJSONEncoder.encode([Double.nan]) }
    }
}
