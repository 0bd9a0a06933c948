import Foundation

/// Encodes an `Encodable` value as JSON by writing it out as it is encoded, with no tree of
/// intermediate values: several times faster than Foundation's `JSONEncoder` on the server's
/// snapshots and events. The output is what `JSONEncoder` with `.withoutEscapingSlashes` writes,
/// up to key order (keys come in the order they are encoded).
///
/// It streams, so it takes the usual order of encoding: a container is finished before its
/// parent goes on. A value that writes to a container after its parent moved on, asks for a
/// super encoder, or is one of the types `JSONEncoder` treats specially (`Data`, `Date`, `URL`,
/// `Decimal`) makes `encode` throw `Unsupported`; the caller then uses `JSONEncoder`.
public enum StreamingJSONEncoder {
    /// The value needs an encoder that does not stream (see the type's comment).
    public struct Unsupported: Error, Sendable {
        public let reason: String
    }

    public static func encode(_ value: some Encodable) throws -> Data {
        let sink = Sink()
        try sink.write(value)
        if let failure = sink.failure { throw failure }
        return Data(sink.bytes)
    }

    // MARK: Output

    fileprivate final class Sink {
        var bytes: [UInt8] = []
        /// The containers being written, outermost first: the byte that closes each, whether it
        /// has an element yet, and its identity (a container written after it was closed fails).
        var open: [(close: UInt8, empty: Bool, id: Int)] = []
        var nextId = 0
        var failure: Unsupported?

        init() { bytes.reserveCapacity(512) }

        func fail(_ reason: String) {
            if failure == nil { failure = Unsupported(reason: reason) }
        }

        /// Opens an object or array; returns its place in `open` and its identity.
        func push(_ opening: UInt8, _ closing: UInt8) -> (level: Int, id: Int) {
            bytes.append(opening)
            nextId += 1
            open.append((closing, true, nextId))
            return (open.count - 1, nextId)
        }

        /// Closes the innermost containers until `level` of them are open.
        func close(to level: Int) {
            while open.count > level {
                bytes.append(open.removeLast().close)
            }
        }

        /// Starts the next element of the container at `level`: closes what is open inside it and
        /// writes the comma. False if that container was already closed.
        func beginElement(level: Int, id: Int) -> Bool {
            guard level < open.count, open[level].id == id else {
                fail("a container was written after its parent moved on")
                return false
            }
            close(to: level + 1)
            if open[level].empty {
                open[level].empty = false
            } else {
                bytes.append(UInt8(ascii: ","))
            }
            return true
        }

        /// Writes any value in the current slot, then closes whatever it opened.
        func write<T: Encodable>(_ value: T) throws {
            if T.self == Data.self || T.self == Date.self || T.self == URL.self || T.self == Decimal.self {
                throw Unsupported(reason: "\(T.self) is encoded specially by JSONEncoder")
            }
            let depth = open.count
            let start = bytes.count
            try value.encode(to: ValueEncoder(sink: self, depth: depth))
            if let failure { throw failure }
            guard bytes.count > start else { throw Unsupported(reason: "\(T.self) encoded nothing") }
            close(to: depth)
        }

        func writeNull() { bytes.append(contentsOf: "null".utf8) }

        func write(_ value: Bool) { bytes.append(contentsOf: (value ? "true" : "false").utf8) }

        func write(integer value: some FixedWidthInteger) {
            if value < 0 { bytes.append(UInt8(ascii: "-")) }
            var magnitude = UInt64(value.magnitude)
            let start = bytes.count
            repeat {
                bytes.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
                magnitude /= 10
            } while magnitude > 0
            bytes[start...].reverse()
        }

        /// A number as Swift writes it (the shortest text that reads back the same), without a
        /// trailing ".0", as JSONEncoder writes it.
        func write<F: BinaryFloatingPoint & LosslessStringConvertible>(float value: F) throws {
            guard value.isFinite else { throw Unsupported(reason: "\(value) is not a JSON number") }
            var text = value.description
            if text.hasSuffix(".0") { text.removeLast(2) }
            bytes.append(contentsOf: text.utf8)
        }

        func write(_ string: String) {
            bytes.append(UInt8(ascii: "\""))
            for byte in string.utf8 {
                switch byte {
                case UInt8(ascii: "\""): bytes.append(contentsOf: [0x5C, 0x22])
                case UInt8(ascii: "\\"): bytes.append(contentsOf: [0x5C, 0x5C])
                case 0x0A: bytes.append(contentsOf: [0x5C, 0x6E])
                case 0x0D: bytes.append(contentsOf: [0x5C, 0x72])
                case 0x09: bytes.append(contentsOf: [0x5C, 0x74])
                case 0x08: bytes.append(contentsOf: [0x5C, 0x62])
                case 0x0C: bytes.append(contentsOf: [0x5C, 0x66])
                case 0..<0x20:
                    let hex = Array("0123456789abcdef".utf8)
                    bytes.append(contentsOf: [0x5C, 0x75, 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]])
                default: bytes.append(byte)
                }
            }
            bytes.append(UInt8(ascii: "\""))
        }
    }

    // MARK: Encoder

    fileprivate struct ValueEncoder: Encoder {
        let sink: Sink
        /// How many containers were open when this value began.
        let depth: Int
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            KeyedEncodingContainer(KeyedContainer<Key>(sink: sink, place: opened(UInt8(ascii: "{"), UInt8(ascii: "}"))))
        }

        func unkeyedContainer() -> any UnkeyedEncodingContainer {
            UnkeyedContainer(sink: sink, place: opened(UInt8(ascii: "["), UInt8(ascii: "]")))
        }

        func singleValueContainer() -> any SingleValueEncodingContainer {
            SingleValue(sink: sink)
        }

        /// This value's container: the one it opened already, or a new one.
        private func opened(_ opening: UInt8, _ closing: UInt8) -> (level: Int, id: Int) {
            if sink.open.count > depth {
                if sink.open[depth].close != closing { sink.fail("a value asked for two kinds of container") }
                return (depth, sink.open[depth].id)
            }
            return sink.push(opening, closing)
        }
    }

    fileprivate struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let sink: Sink
        let place: (level: Int, id: Int)
        var codingPath: [any CodingKey] { [] }

        private func key(_ key: Key) -> Bool {
            guard sink.beginElement(level: place.level, id: place.id) else { return false }
            sink.write(key.stringValue)
            sink.bytes.append(UInt8(ascii: ":"))
            return true
        }

        mutating func encodeNil(forKey key: Key) throws { if self.key(key) { sink.writeNull() } }
        mutating func encode(_ value: Bool, forKey key: Key) throws { if self.key(key) { sink.write(value) } }
        mutating func encode(_ value: String, forKey key: Key) throws { if self.key(key) { sink.write(value) } }
        mutating func encode(_ value: Double, forKey key: Key) throws { if self.key(key) { try sink.write(float: value) } }
        mutating func encode(_ value: Float, forKey key: Key) throws { if self.key(key) { try sink.write(float: value) } }
        mutating func encode(_ value: Int, forKey key: Key) throws { if self.key(key) { sink.write(integer: value) } }
        mutating func encode(_ value: Int8, forKey key: Key) throws { if self.key(key) { sink.write(integer: value) } }
        mutating func encode(_ value: Int16, forKey key: Key) throws { if self.key(key) { sink.write(integer: value) } }
        mutating func encode(_ value: Int32, forKey key: Key) throws { if self.key(key) { sink.write(integer: value) } }
        mutating func encode(_ value: Int64, forKey key: Key) throws { if self.key(key) { sink.write(integer: value) } }
        mutating func encode(_ value: UInt, forKey key: Key) throws { if self.key(key) { sink.write(integer: value) } }
        mutating func encode(_ value: UInt8, forKey key: Key) throws { if self.key(key) { sink.write(integer: value) } }
        mutating func encode(_ value: UInt16, forKey key: Key) throws { if self.key(key) { sink.write(integer: value) } }
        mutating func encode(_ value: UInt32, forKey key: Key) throws { if self.key(key) { sink.write(integer: value) } }
        mutating func encode(_ value: UInt64, forKey key: Key) throws { if self.key(key) { sink.write(integer: value) } }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { if self.key(key) { try sink.write(value) } }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            _ = self.key(key)
            return KeyedEncodingContainer(KeyedContainer<NestedKey>(sink: sink, place: sink.push(UInt8(ascii: "{"), UInt8(ascii: "}"))))
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            _ = self.key(key)
            return UnkeyedContainer(sink: sink, place: sink.push(UInt8(ascii: "["), UInt8(ascii: "]")))
        }

        mutating func superEncoder() -> any Encoder {
            sink.fail("super encoders are not streamed")
            return ValueEncoder(sink: sink, depth: sink.open.count)
        }

        mutating func superEncoder(forKey key: Key) -> any Encoder { superEncoder() }
    }

    fileprivate struct UnkeyedContainer: UnkeyedEncodingContainer {
        let sink: Sink
        let place: (level: Int, id: Int)
        var codingPath: [any CodingKey] { [] }
        private(set) var count = 0

        init(sink: Sink, place: (level: Int, id: Int)) {
            self.sink = sink
            self.place = place
        }

        private mutating func element() -> Bool {
            count += 1
            return sink.beginElement(level: place.level, id: place.id)
        }

        mutating func encodeNil() throws { if element() { sink.writeNull() } }
        mutating func encode(_ value: Bool) throws { if element() { sink.write(value) } }
        mutating func encode(_ value: String) throws { if element() { sink.write(value) } }
        mutating func encode(_ value: Double) throws { if element() { try sink.write(float: value) } }
        mutating func encode(_ value: Float) throws { if element() { try sink.write(float: value) } }
        mutating func encode(_ value: Int) throws { if element() { sink.write(integer: value) } }
        mutating func encode(_ value: Int8) throws { if element() { sink.write(integer: value) } }
        mutating func encode(_ value: Int16) throws { if element() { sink.write(integer: value) } }
        mutating func encode(_ value: Int32) throws { if element() { sink.write(integer: value) } }
        mutating func encode(_ value: Int64) throws { if element() { sink.write(integer: value) } }
        mutating func encode(_ value: UInt) throws { if element() { sink.write(integer: value) } }
        mutating func encode(_ value: UInt8) throws { if element() { sink.write(integer: value) } }
        mutating func encode(_ value: UInt16) throws { if element() { sink.write(integer: value) } }
        mutating func encode(_ value: UInt32) throws { if element() { sink.write(integer: value) } }
        mutating func encode(_ value: UInt64) throws { if element() { sink.write(integer: value) } }
        mutating func encode<T: Encodable>(_ value: T) throws { if element() { try sink.write(value) } }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            _ = element()
            return KeyedEncodingContainer(KeyedContainer<NestedKey>(sink: sink, place: sink.push(UInt8(ascii: "{"), UInt8(ascii: "}"))))
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            _ = element()
            return UnkeyedContainer(sink: sink, place: sink.push(UInt8(ascii: "["), UInt8(ascii: "]")))
        }

        mutating func superEncoder() -> any Encoder {
            sink.fail("super encoders are not streamed")
            return ValueEncoder(sink: sink, depth: sink.open.count)
        }
    }

    fileprivate struct SingleValue: SingleValueEncodingContainer {
        let sink: Sink
        var codingPath: [any CodingKey] { [] }

        mutating func encodeNil() throws { sink.writeNull() }
        mutating func encode(_ value: Bool) throws { sink.write(value) }
        mutating func encode(_ value: String) throws { sink.write(value) }
        mutating func encode(_ value: Double) throws { try sink.write(float: value) }
        mutating func encode(_ value: Float) throws { try sink.write(float: value) }
        mutating func encode(_ value: Int) throws { sink.write(integer: value) }
        mutating func encode(_ value: Int8) throws { sink.write(integer: value) }
        mutating func encode(_ value: Int16) throws { sink.write(integer: value) }
        mutating func encode(_ value: Int32) throws { sink.write(integer: value) }
        mutating func encode(_ value: Int64) throws { sink.write(integer: value) }
        mutating func encode(_ value: UInt) throws { sink.write(integer: value) }
        mutating func encode(_ value: UInt8) throws { sink.write(integer: value) }
        mutating func encode(_ value: UInt16) throws { sink.write(integer: value) }
        mutating func encode(_ value: UInt32) throws { sink.write(integer: value) }
        mutating func encode(_ value: UInt64) throws { sink.write(integer: value) }
        mutating func encode<T: Encodable>(_ value: T) throws { try sink.write(value) }
    }
}
