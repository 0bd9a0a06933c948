/// Any JSON value: the free-form parts of the protocol (chat and signal payloads).
///
/// Integers that fit in 64 bits stay integers; every other number is a `Double`.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])
}

extension JSONValue: Codable {
    /// Decoded through any `Decoder`, nesting at most `JSONParser.maxDepth` levels below where
    /// the decoder stands when it starts (each level tries the scalar kinds before an array or
    /// an object, so depth must stay bounded). Text from outside is parsed by `JSONParser`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let depth = decoder.codingPath.count
        if depth > Self.decodingDepthLimit {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "nested deeper than \(Self.decodingDepthLimit) levels"))
        }
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

extension JSONValue {
    /// How deep a coding path `init(from:)` accepts: a value of `JSONParser.maxDepth` levels
    /// inside a frame's own few.
    static let decodingDepthLimit = JSONParser.maxDepth + 8

    /// The value as an integer, when it is one (a whole `Double` counts).
    public var intValue: Int64? {
        switch self {
        case .int(let value): return value
        case .double(let value) where value.rounded() == value && abs(value) < 9.0e15: return Int64(value)
        default: return nil
        }
    }

    /// The value as a string, when it is one.
    /// The number, whether it was written with a fraction or not.
    public var doubleValue: Double? {
        switch self {
        case .int(let value): return Double(value)
        case .double(let value): return value
        default: return nil
        }
    }

    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The member `key` of an object, or nil.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }
}
