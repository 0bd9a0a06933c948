/// Decodes a `Decodable` straight from a `JSONValue` (an answer's `data` already parsed by the
/// signaling client), with `DecodingError`s that name the path, as Foundation's decoder does.
public struct JSONValueDecoder {
    public init() {}

    public func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        try T(from: Node(value: value, codingPath: []))
    }

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int?
        init(stringValue: String) { self.stringValue = stringValue }
        init(intValue: Int) {
            stringValue = "\(intValue)"
            self.intValue = intValue
        }
    }

    private struct Node: Decoder, SingleValueDecodingContainer {
        let value: JSONValue
        let codingPath: [any CodingKey]
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<K: CodingKey>(keyedBy type: K.Type) throws -> KeyedDecodingContainer<K> {
            guard case .object(let object) = value else { throw mismatch([String: JSONValue].self) }
            return KeyedDecodingContainer(Keyed<K>(object: object, codingPath: codingPath))
        }

        func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
            guard case .array(let array) = value else { throw mismatch([JSONValue].self) }
            return Unkeyed(array: array, codingPath: codingPath)
        }

        func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

        func mismatch(_ type: Any.Type) -> DecodingError {
            DecodingError.typeMismatch(type, .init(codingPath: codingPath, debugDescription: "expected \(type), found \(value)"))
        }

        func decodeNil() -> Bool { value == .null }

        func decode(_ type: Bool.Type) throws -> Bool {
            guard case .bool(let bool) = value else { throw mismatch(type) }
            return bool
        }

        func decode(_ type: String.Type) throws -> String {
            guard case .string(let string) = value else { throw mismatch(type) }
            return string
        }

        func decode(_ type: Double.Type) throws -> Double {
            guard let number = value.doubleValue else { throw mismatch(type) }
            return number
        }

        func decode(_ type: Float.Type) throws -> Float { Float(try decode(Double.self)) }

        func decode(_ type: Int.Type) throws -> Int { try decodeInteger(type) }
        func decode(_ type: Int8.Type) throws -> Int8 { try decodeInteger(type) }
        func decode(_ type: Int16.Type) throws -> Int16 { try decodeInteger(type) }
        func decode(_ type: Int32.Type) throws -> Int32 { try decodeInteger(type) }
        func decode(_ type: Int64.Type) throws -> Int64 { try decodeInteger(type) }
        func decode(_ type: UInt.Type) throws -> UInt { try decodeInteger(type) }
        func decode(_ type: UInt8.Type) throws -> UInt8 { try decodeInteger(type) }
        func decode(_ type: UInt16.Type) throws -> UInt16 { try decodeInteger(type) }
        func decode(_ type: UInt32.Type) throws -> UInt32 { try decodeInteger(type) }
        func decode(_ type: UInt64.Type) throws -> UInt64 { try decodeInteger(type) }

        private func decodeInteger<T: BinaryInteger>(_ type: T.Type) throws -> T {
            guard let number = value.intValue, let exact = T(exactly: number) else { throw mismatch(type) }
            return exact
        }

        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            if type == JSONValue.self, let same = value as? T { return same }
            return try T(from: self)
        }
    }

    private struct Keyed<K: CodingKey>: KeyedDecodingContainerProtocol {
        let object: [String: JSONValue]
        let codingPath: [any CodingKey]
        var allKeys: [K] { object.keys.compactMap { K(stringValue: $0) } }

        func contains(_ key: K) -> Bool { object[key.stringValue] != nil }

        func node(_ key: K) throws -> Node {
            guard let value = object[key.stringValue] else {
                throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "no \(key.stringValue)"))
            }
            return Node(value: value, codingPath: codingPath + [key])
        }

        func decodeNil(forKey key: K) throws -> Bool { (object[key.stringValue] ?? .null) == .null }

        func decode<T: Decodable>(_ type: T.Type, forKey key: K) throws -> T { try node(key).decode(type) }

        func nestedContainer<N: CodingKey>(keyedBy type: N.Type, forKey key: K) throws -> KeyedDecodingContainer<N> {
            try node(key).container(keyedBy: type)
        }

        func nestedUnkeyedContainer(forKey key: K) throws -> any UnkeyedDecodingContainer { try node(key).unkeyedContainer() }

        func superDecoder() throws -> any Decoder { Node(value: .object(object), codingPath: codingPath) }

        func superDecoder(forKey key: K) throws -> any Decoder { try node(key) }
    }

    private struct Unkeyed: UnkeyedDecodingContainer {
        let array: [JSONValue]
        let codingPath: [any CodingKey]
        var currentIndex = 0
        var count: Int? { array.count }
        var isAtEnd: Bool { currentIndex >= array.count }

        mutating func next() throws -> Node {
            guard !isAtEnd else {
                throw DecodingError.valueNotFound(JSONValue.self, .init(codingPath: codingPath, debugDescription: "the array has \(array.count) items"))
            }
            defer { currentIndex += 1 }
            return Node(value: array[currentIndex], codingPath: codingPath + [Key(intValue: currentIndex)])
        }

        mutating func decodeNil() throws -> Bool {
            guard !isAtEnd, array[currentIndex] == .null else { return false }
            currentIndex += 1
            return true
        }

        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next().decode(type) }

        mutating func nestedContainer<N: CodingKey>(keyedBy type: N.Type) throws -> KeyedDecodingContainer<N> {
            try next().container(keyedBy: type)
        }

        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { try next().unkeyedContainer() }

        mutating func superDecoder() throws -> any Decoder { try next() }
    }
}
