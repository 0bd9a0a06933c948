/// Reads typed values out of a request's `args`, turning every wrong type or missing field into
/// a `bad_request` that names the field.
struct ArgsReader {
    let fields: [String: JSONValue]

    init(_ args: JSONValue?) throws(ProtocolError) {
        switch args {
        case nil, .null?: fields = [:]
        case .object(let members)?: fields = members
        default: throw ProtocolError(.badRequest, "args must be an object")
        }
    }

    private func value(_ key: String) -> JSONValue? {
        switch fields[key] {
        case nil, .null?: return nil
        case let value?: return value
        }
    }

    /// A NUL cannot be stored as part of a text (the store would keep only what comes before
    /// it), so no string with one is taken: what is kept is always what was delivered.
    static func refuseNUL(_ text: String, _ field: String) throws(ProtocolError) {
        if text.utf8.contains(0) { throw ProtocolError(.badRequest, "\(field) must not contain a NUL character (U+0000)") }
    }

    func optionalString(_ key: String, maxLength: Int? = nil) throws(ProtocolError) -> String? {
        guard let value = value(key) else { return nil }
        guard case .string(let text) = value else { throw ProtocolError(.badRequest, "args.\(key) must be a string") }
        try Self.refuseNUL(text, "args.\(key)")
        if let maxLength, text.count > maxLength {
            throw ProtocolError(.badRequest, "args.\(key) is longer than \(maxLength) characters")
        }
        return text
    }

    /// A string with something to see in it: not only white space (Unicode's, and the four
    /// information separators U+001C to U+001F, which some languages count with it).
    func nonBlankString(_ key: String, maxLength: Int? = nil) throws(ProtocolError) -> String {
        let text = try string(key, maxLength: maxLength)
        guard text.unicodeScalars.contains(where: { !$0.properties.isWhitespace && !(0x1C...0x1F).contains($0.value) }) else {
            throw ProtocolError(.badRequest, "args.\(key) must not be empty or only spaces")
        }
        return text
    }

    func string(_ key: String, maxLength: Int? = nil) throws(ProtocolError) -> String {
        guard let text = try optionalString(key, maxLength: maxLength) else {
            throw ProtocolError(.badRequest, "args.\(key) is required")
        }
        return text
    }

    func identifier(_ key: String) throws(ProtocolError) -> String {
        guard let id = try optionalIdentifier(key) else { throw ProtocolError(.badRequest, "args.\(key) is required") }
        return id
    }

    func optionalIdentifier(_ key: String) throws(ProtocolError) -> String? {
        guard let id = try optionalString(key) else { return nil }
        guard Identifier.isValid(id) else {
            throw ProtocolError(.badRequest, "args.\(key) must be 1 to 64 characters of A-Z a-z 0-9 _ . @ -")
        }
        return id
    }

    func optionalInt(_ key: String, in range: ClosedRange<Int>? = nil) throws(ProtocolError) -> Int? {
        guard let value = value(key) else { return nil }
        guard let number = value.intValue, number >= Int64(Int.min), number <= Int64(Int.max) else {
            throw ProtocolError(.badRequest, "args.\(key) must be an integer")
        }
        if let range, !range.contains(Int(number)) {
            throw ProtocolError(.badRequest, "args.\(key) must be in \(range.lowerBound)...\(range.upperBound)")
        }
        return Int(number)
    }

    func int(_ key: String, in range: ClosedRange<Int>? = nil) throws(ProtocolError) -> Int {
        guard let number = try optionalInt(key, in: range) else {
            throw ProtocolError(.badRequest, "args.\(key) is required")
        }
        return number
    }

    func optionalBool(_ key: String) throws(ProtocolError) -> Bool? {
        guard let value = value(key) else { return nil }
        guard case .bool(let flag) = value else { throw ProtocolError(.badRequest, "args.\(key) must be true or false") }
        return flag
    }

    func bool(_ key: String) throws(ProtocolError) -> Bool {
        guard let flag = try optionalBool(key) else { throw ProtocolError(.badRequest, "args.\(key) is required") }
        return flag
    }

    func optionalEnum<E: RawRepresentable>(_ key: String, _: E.Type) throws(ProtocolError) -> E? where E.RawValue == String {
        guard let text = try optionalString(key) else { return nil }
        guard let parsed = E(rawValue: text) else { throw ProtocolError(.badRequest, "args.\(key) '\(text)' is not allowed") }
        return parsed
    }

    func stringList(_ key: String) throws(ProtocolError) -> [String] {
        guard case .array(let items)? = value(key) else {
            throw ProtocolError(.badRequest, "args.\(key) must be an array of strings")
        }
        var result: [String] = []
        for item in items {
            guard case .string(let text) = item else {
                throw ProtocolError(.badRequest, "args.\(key) must be an array of strings")
            }
            try Self.refuseNUL(text, "args.\(key)")
            result.append(text)
        }
        return result
    }

    /// Distinct user ids in the order first named; at most `maxCount` of them.
    func identifierSet(_ key: String, maxCount: Int) throws(ProtocolError) -> [String] {
        var seen = Set<String>()
        var result: [String] = []
        for id in try stringList(key) where seen.insert(id).inserted {
            guard Identifier.isValid(id) else {
                throw ProtocolError(.badRequest, "args.\(key) must hold user ids of 1 to 64 characters of A-Z a-z 0-9 _ . @ -")
            }
            guard result.count < maxCount else { throw ProtocolError(.badRequest, "args.\(key) may name at most \(maxCount) users") }
            result.append(id)
        }
        return result
    }

    func stringMap(_ key: String) throws(ProtocolError) -> [String: String] {
        guard case .object(let members)? = value(key) else {
            throw ProtocolError(.badRequest, "args.\(key) must be an object of strings")
        }
        var result: [String: String] = [:]
        for (name, item) in members {
            guard case .string(let text) = item else {
                throw ProtocolError(.badRequest, "args.\(key).\(name) must be a string")
            }
            try Self.refuseNUL(name, "args.\(key)'s keys")
            try Self.refuseNUL(text, "args.\(key).\(name)")
            result[name] = text
        }
        return result
    }

    func raw(_ key: String) -> JSONValue? { value(key) }
}
