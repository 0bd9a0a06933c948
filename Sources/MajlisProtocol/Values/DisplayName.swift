/// Display names as the server keeps them: what came in (a token's `name`, `member.update`)
/// without control and format characters (escape sequences, bidi overrides, zero-width tricks),
/// whitespace collapsed, so every client can print them as they are.
public enum DisplayName {
    /// `raw` cleaned: C0/C1 controls, format characters (except the joiners that emoji and
    /// Persian script need), line and paragraph separators and unassigned code points removed;
    /// runs of whitespace made one space; trimmed; at most `RequestDecoder.Limits.name` characters.
    public static func clean(_ raw: String) -> String {
        var scalars = String.UnicodeScalarView()
        var pendingSpace = false
        for scalar in raw.unicodeScalars {
            if scalar.properties.isWhitespace {
                pendingSpace = !scalars.isEmpty
                continue
            }
            switch scalar.properties.generalCategory {
            case .control, .lineSeparator, .paragraphSeparator, .surrogate, .unassigned, .privateUse:
                continue
            case .format where scalar.value != 0x200C && scalar.value != 0x200D:
                continue
            default:
                break
            }
            if pendingSpace {
                scalars.append(" ")
                pendingSpace = false
            }
            scalars.append(scalar)
        }
        return String(String(scalars).prefix(RequestDecoder.Limits.name))
    }

    /// The form two names are compared in: names equal in it are the same name to a reader
    /// (case and the fullwidth forms of ASCII letters and signs aside).
    public static func comparisonKey(_ name: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in name.unicodeScalars {
            scalars.append((0xFF01...0xFF5E).contains(scalar.value) ? Unicode.Scalar(scalar.value - 0xFEE0) ?? scalar : scalar)
        }
        return String(scalars).lowercased()
    }
}
