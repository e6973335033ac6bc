import Foundation

/// JSON text written by hand where a line must be cheap (log lines, exports of millions of
/// listens): JSONSerialization's bridging costs about 100 µs a line.
public enum JSONText {
    /// `text` as a JSON string: quotes, backslashes and control characters (and DEL) escaped, the rest as UTF-8.
    public static func quoted(_ text: String) -> String {
        var out = "\""
        out.reserveCapacity(text.utf8.count + 2)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
