/// Parses JSON text (RFC 8259) into a `JSONValue` in one pass: time linear in the input, nesting
/// bounded by `maxDepth`, strings valid UTF-8 with escapes decoded. Everything the server reads
/// from the network or its store goes through here, so that no input, however shaped, costs more
/// than its length.
///
/// Strict: one value with optional whitespace around it; no comments, trailing commas, leading
/// zeros, `NaN`, raw control characters in strings, or lone surrogates. A repeated object key
/// keeps its last value.
public struct JSONParser {
    /// Why the text is not JSON, and where (a byte offset).
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public var message: String
        public var offset: Int
        public var description: String { "\(message) at byte \(offset)" }
    }

    /// How deeply arrays and objects may nest in a frame or a request body (the outermost
    /// object counts as one).
    public static let maxDepth = 32

    /// How many values (each array, object, string, number, `true`, `false` or `null`, keys
    /// not counted) a frame or a request body may hold: what a client sends is bounded in the
    /// work it makes by its count of values as well as its length.
    public static let maxRequestValues = 4_096

    public let maxDepth: Int
    public let maxValues: Int

    public init(maxDepth: Int = JSONParser.maxDepth, maxValues: Int = .max) {
        self.maxDepth = maxDepth
        self.maxValues = maxValues
    }

    /// The value `bytes` hold.
    public func parse<Bytes: Collection<UInt8>>(_ bytes: Bytes) throws(Failure) -> JSONValue {
        let result: Result<JSONValue, Failure>? = bytes.withContiguousStorageIfAvailable { buffer in
            var cursor = Cursor(bytes: buffer, maxDepth: maxDepth, maxValues: maxValues)
            do throws(Failure) { return .success(try cursor.document()) } catch { return .failure(error) }
        }
        if let result { return try result.get() }
        return try parse(Array(bytes))
    }

    /// The value `text` holds.
    public func parse(_ text: String) throws(Failure) -> JSONValue {
        try parse(Array(text.utf8))
    }

    private struct Cursor {
        let bytes: UnsafeBufferPointer<UInt8>
        let maxDepth: Int
        let maxValues: Int
        var index = 0
        var depth = 0
        var values = 0
        /// Reused for strings with escapes.
        var scratch: [UInt8] = []

        init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int, maxValues: Int) {
            self.bytes = bytes
            self.maxDepth = maxDepth
            self.maxValues = maxValues
        }

        func fail(_ message: String) -> Failure { Failure(message: message, offset: index) }

        mutating func document() throws(Failure) -> JSONValue {
            skipSpace()
            let value = try value()
            skipSpace()
            guard index == bytes.count else { throw fail("unexpected text after the value") }
            return value
        }

        mutating func skipSpace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        mutating func value() throws(Failure) -> JSONValue {
            guard index < bytes.count else { throw fail("unexpected end of the text") }
            values += 1
            guard values <= maxValues else { throw fail("more than \(maxValues) values") }
            switch bytes[index] {
            case UInt8(ascii: "{"): return try object()
            case UInt8(ascii: "["): return try array()
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): return try literal("true", .bool(true))
            case UInt8(ascii: "f"): return try literal("false", .bool(false))
            case UInt8(ascii: "n"): return try literal("null", .null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
            default: throw fail("unexpected character")
            }
        }

        mutating func literal(_ word: StaticString, _ value: JSONValue) throws(Failure) -> JSONValue {
            let count = word.utf8CodeUnitCount
            guard bytes.count - index >= count else { throw fail("unexpected end of the text") }
            for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] {
                throw fail("unexpected character")
            }
            index += count
            return value
        }

        mutating func enter() throws(Failure) {
            depth += 1
            guard depth <= maxDepth else { throw fail("nested deeper than \(maxDepth) levels") }
        }

        mutating func array() throws(Failure) -> JSONValue {
            try enter()
            index += 1
            var items: [JSONValue] = []
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                depth -= 1
                return .array(items)
            }
            while true {
                skipSpace()
                items.append(try value())
                skipSpace()
                guard index < bytes.count else { throw fail("unexpected end of the text") }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                } else if bytes[index] == UInt8(ascii: "]") {
                    index += 1
                    depth -= 1
                    return .array(items)
                } else {
                    throw fail("expected , or ]")
                }
            }
        }

        mutating func object() throws(Failure) -> JSONValue {
            try enter()
            index += 1
            var members: [String: JSONValue] = [:]
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                depth -= 1
                return .object(members)
            }
            while true {
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a string key") }
                let key = try string()
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("expected :") }
                index += 1
                skipSpace()
                members[key] = try value()
                skipSpace()
                guard index < bytes.count else { throw fail("unexpected end of the text") }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                } else if bytes[index] == UInt8(ascii: "}") {
                    index += 1
                    depth -= 1
                    return .object(members)
                } else {
                    throw fail("expected , or }")
                }
            }
        }

        /// A string from its opening quote; the cursor ends after the closing one.
        mutating func string() throws(Failure) -> String {
            index += 1
            let start = index
            // The common case, no escapes: the bytes as they are.
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    let text = String(validating: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                    guard let text else { throw Failure(message: "a string is not valid UTF-8", offset: start) }
                    index += 1
                    return text
                }
                if byte == UInt8(ascii: "\\") { break }
                guard byte >= 0x20 else { throw fail("a control character must be escaped in a string") }
                index += 1
            }
            scratch.removeAll(keepingCapacity: true)
            scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
            while index < bytes.count {
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "\""):
                    guard let text = String(validating: scratch, as: UTF8.self) else {
                        throw Failure(message: "a string is not valid UTF-8", offset: start)
                    }
                    index += 1
                    return text
                case UInt8(ascii: "\\"):
                    index += 1
                    try escape()
                case ..<0x20:
                    throw fail("a control character must be escaped in a string")
                default:
                    scratch.append(byte)
                    index += 1
                }
            }
            throw fail("unexpected end of the text in a string")
        }

        /// The escape after a backslash, appended to `scratch` as UTF-8.
        mutating func escape() throws(Failure) {
            guard index < bytes.count else { throw fail("unexpected end of the text in a string") }
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scratch.append(byte)
            case UInt8(ascii: "b"): scratch.append(0x08)
            case UInt8(ascii: "f"): scratch.append(0x0C)
            case UInt8(ascii: "n"): scratch.append(0x0A)
            case UInt8(ascii: "r"): scratch.append(0x0D)
            case UInt8(ascii: "t"): scratch.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800...0xDBFF).contains(scalar) {
                    guard bytes.count - index >= 2, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                        throw fail("a high surrogate without its low surrogate")
                    }
                    index += 2
                    let low = try hex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw fail("a high surrogate without its low surrogate") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    throw fail("a low surrogate without its high surrogate")
                }
                guard let unicode = Unicode.Scalar(scalar) else { throw fail("not a Unicode scalar") }
                scratch.append(contentsOf: UTF8.encode(unicode)!)
            default:
                throw fail("an unknown escape in a string")
            }
        }

        mutating func hex4() throws(Failure) -> UInt32 {
            guard bytes.count - index >= 4 else { throw fail("unexpected end of the text in a string") }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: throw fail("\\u needs four hexadecimal digits")
                }
                value = value << 4 | UInt32(digit)
                index += 1
            }
            return value
        }

        mutating func digits() -> Int {
            let start = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            return index - start
        }

        mutating func number() throws(Failure) -> JSONValue {
            let start = index
            if bytes[index] == UInt8(ascii: "-") { index += 1 }
            let integerStart = index
            let integerDigits = digits()
            guard integerDigits > 0 else { throw fail("a number needs digits") }
            guard integerDigits == 1 || bytes[integerStart] != UInt8(ascii: "0") else {
                throw Failure(message: "a number must not start with 0", offset: integerStart)
            }
            var whole = true
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                whole = false
                index += 1
                guard digits() > 0 else { throw fail("a fraction needs digits") }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                whole = false
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                guard digits() > 0 else { throw fail("an exponent needs digits") }
            }
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            if whole, let integer = Int64(text) { return .int(integer) }
            guard let double = Double(text), double.isFinite else {
                throw Failure(message: "a number out of range", offset: start)
            }
            return .double(double)
        }
    }
}

extension JSONValue {
    /// The value of JSON text (see `JSONParser`), nesting at most `maxDepth` levels.
    public init<Bytes: Collection<UInt8>>(parsing bytes: Bytes, maxDepth: Int = JSONParser.maxDepth) throws(JSONParser.Failure) {
        self = try JSONParser(maxDepth: maxDepth).parse(bytes)
    }
}
