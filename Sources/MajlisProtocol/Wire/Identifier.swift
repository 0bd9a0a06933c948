/// Rules for user and room ids: 1 to 64 characters of `[A-Za-z0-9_.@-]`.
public enum Identifier {
    /// The longest id.
    public static let maxLength = 64

    /// Whether `id` is a valid user or room id.
    public static func isValid(_ id: String) -> Bool {
        let utf8 = id.utf8
        guard !utf8.isEmpty, utf8.count <= maxLength else { return false }
        return utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "@"),
                UInt8(ascii: "-"):
                return true
            default:
                return false
            }
        }
    }
}
