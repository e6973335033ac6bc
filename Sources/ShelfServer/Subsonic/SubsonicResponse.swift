import Foundation

/// One attribute value of a Subsonic element, typed so JSON gets numbers and booleans while XML
/// gets their text.
enum SubsonicValue: Sendable, Equatable {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)

    var text: String {
        switch self {
        case .string(let value): value
        case .int(let value): String(value)
        case .double(let value): String(value)
        case .bool(let value): value ? "true" : "false"
        }
    }
}

/// One element of a Subsonic answer: the single model both renderers read, so XML and JSON
/// cannot disagree. `repeated` marks elements that are list members (a JSON array even when
/// there is one); `text` is an element's content (`<genre>Jazz</genre>`, JSON's `"value"`).
struct SubsonicElement: Sendable, Equatable {
    /// The element's name (`song`, `album`, …).
    var name: String
    /// Attributes in order; nil values are dropped when added.
    var attributes: [(String, SubsonicValue)]
    /// Child elements in order.
    var children: [SubsonicElement]
    /// Whether this element is one of a list (`<song>` in `<album>`).
    var repeated: Bool
    /// Text content, if any.
    var text: String?
    /// A bare value: an element that is only a typed value (`versions` of an extension), XML
    /// content and in JSON the value itself, not an object.
    var value: SubsonicValue?

    /// An element with its parts.
    init(_ name: String, repeated: Bool = false, _ attributes: [(String, SubsonicValue?)] = [], children: [SubsonicElement] = [], text: String? = nil) {
        self.name = name
        self.repeated = repeated
        self.attributes = attributes.compactMap { key, value in value.map { (key, $0) } }
        self.children = children
        self.text = text
    }

    /// An element with attributes already known to be present (no nil values to drop).
    init(_ name: String, repeated: Bool, present attributes: [(String, SubsonicValue)]) {
        self.name = name
        self.repeated = repeated
        self.attributes = attributes
        self.children = []
    }

    /// An element that is only `value`.
    init(_ name: String, repeated: Bool = false, value: SubsonicValue) {
        self.init(name, repeated: repeated, text: value.text)
        self.value = value
    }

    /// A copy marked as a list member.
    func asList() -> SubsonicElement {
        var copy = self
        copy.repeated = true
        return copy
    }

    static func == (lhs: SubsonicElement, rhs: SubsonicElement) -> Bool {
        lhs.name == rhs.name && lhs.repeated == rhs.repeated && lhs.text == rhs.text && lhs.value == rhs.value && lhs.children == rhs.children
            && lhs.attributes.map(\.0) == rhs.attributes.map(\.0) && lhs.attributes.map(\.1) == rhs.attributes.map(\.1)
    }
}

/// The output formats (`f`): XML by default, JSON, and JSONP with a checked callback name.
enum SubsonicFormat: Sendable, Equatable {
    case xml
    case json
    case jsonp(callback: String)

    /// The format of `f` and `callback`; nil for an unknown `f` or a callback that is not a plain
    /// JavaScript name (anything else could inject script into the page that loads it).
    static func parse(_ f: String?, callback: String?) -> SubsonicFormat? {
        switch f {
        case nil, "", "xml": return .xml
        case "json": return .json
        case "jsonp":
            let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.$")
            guard let callback, !callback.isEmpty, callback.count <= 100, callback.allSatisfy({ allowed.contains($0) }) else { return nil }
            return .jsonp(callback: callback)
        default: return nil
        }
    }
}

/// Renders the envelope `subsonic-response` around an answer's elements.
enum SubsonicRenderer {
    static let namespace = "http://subsonic.org/restapi"
    /// The protocol version answered (clients sending any older `v` are still served).
    static let apiVersion = "1.16.1"
    static let serverVersion = "0.1.0"

    /// The root element: status, versions, the OpenSubsonic flag, and the body elements.
    static func envelope(failed: Bool, _ body: [SubsonicElement]) -> SubsonicElement {
        SubsonicElement(
            "subsonic-response",
            [("status", .string(failed ? "failed" : "ok")), ("version", .string(apiVersion)), ("type", .string("shelf")),
             ("serverVersion", .string(serverVersion)), ("openSubsonic", .bool(true))],
            children: body)
    }

    /// The HTTP response of `root` in `format` (always 200: Subsonic reports failures in the body).
    static func response(_ root: SubsonicElement, format: SubsonicFormat, status: Int = 200) -> HTTPResponse {
        let (body, type): (Data, String) = switch format {
        case .xml: (Data(xmlDocument(root).utf8), "text/xml; charset=utf-8")
        case .json: (Data(json(root)), "application/json; charset=utf-8")
        case .jsonp(let callback): (Data(callback.utf8) + Data("(".utf8) + Data(json(root)) + Data(");".utf8), "application/javascript; charset=utf-8")
        }
        return response(body, type: type, status: status)
    }

    /// The HTTP response of a rendered body.
    static func response(_ body: Data, type: String, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", type), ("Cache-Control", "no-store")], body: .data(body))
    }

    // MARK: XML

    static func xmlDocument(_ root: SubsonicElement) -> String {
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        xml(root, into: &out, namespace: true)
        return out
    }

    private static func xml(_ element: SubsonicElement, into out: inout String, namespace: Bool = false) {
        out += "<" + element.name
        if namespace { out += " xmlns=\"\(Self.namespace)\"" }
        for (key, value) in element.attributes { out += " \(key)=\"\(escape(value.text))\"" }
        if element.children.isEmpty && element.text == nil {
            out += "/>"
            return
        }
        out += ">"
        if let text = element.text { out += escape(text) }
        for child in element.children { xml(child, into: &out) }
        out += "</\(element.name)>"
    }

    /// XML text escaping; characters XML 1.0 forbids (control characters a tag may hold) are dropped.
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "\n": out += "&#10;"
            case "\r": out += "&#13;"
            case "\t": out += "&#9;"
            default:
                if scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF { continue }
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    // MARK: JSON

    /// `{"subsonic-response":{…}}` as UTF-8, written into one byte buffer: a 500-song sync page
    /// is some 15,000 keys and values, and a String built per key and value cost more than the
    /// page's reads.
    static func json(_ root: SubsonicElement) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64 * 1024)
        out.append(UInt8(ascii: "{"))
        jsonString(root.name, into: &out)
        out.append(UInt8(ascii: ":"))
        jsonObject(root, into: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }

    private static func jsonObject(_ element: SubsonicElement, into out: inout [UInt8]) {
        if let value = element.value { return jsonValue(value, into: &out) }
        out.append(UInt8(ascii: "{"))
        var first = true
        func key(_ name: String) {
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            jsonString(name, into: &out)
            out.append(UInt8(ascii: ":"))
        }
        for (name, value) in element.attributes {
            key(name)
            jsonValue(value, into: &out)
        }
        if let text = element.text {
            key("value")
            jsonString(text, into: &out)
        }
        guard !element.children.isEmpty else { return out.append(UInt8(ascii: "}")) }
        // Children by name in first-appearance order: list members become one array. The few
        // names are found by comparison rather than grouped into copies (a page has 500 songs).
        var order: [String] = []
        for child in element.children where !order.contains(child.name) { order.append(child.name) }
        for name in order {
            key(name)
            var count = 0
            var only: SubsonicElement?
            for child in element.children where child.name == name {
                count += 1
                if count == 1 { only = child }
            }
            if count == 1, let only, !only.repeated {
                jsonObject(only, into: &out)
                continue
            }
            out.append(UInt8(ascii: "["))
            var first = true
            for child in element.children where child.name == name {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                jsonObject(child, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        }
        out.append(UInt8(ascii: "}"))
    }

    private static func jsonValue(_ value: SubsonicValue, into out: inout [UInt8]) {
        switch value {
        case .string(let text): jsonString(text, into: &out)
        case .int(let number): out.append(contentsOf: String(number).utf8)
        case .double(let number): out.append(contentsOf: (number.isFinite ? String(number) : "0").utf8)
        case .bool(let flag): out.append(contentsOf: (flag ? "true" : "false").utf8)
        }
    }

    /// `text` as a JSON string. U+2028 and U+2029 are escaped too, so JSONP stays valid script.
    static func jsonString(_ text: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            // Most values need no escaping: copied whole.
            guard bytes.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C || $0 == 0xE2 }) else { return out.append(contentsOf: bytes) }
            let hex = Array("0123456789abcdef".utf8)
            var index = 0
            while index < bytes.count {
                let byte = bytes[index]
                switch byte {
                case 0x22: out.append(contentsOf: [0x5C, 0x22])
                case 0x5C: out.append(contentsOf: [0x5C, 0x5C])
                case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
                case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
                case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
                case 0..<0x20: out.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
                case 0xE2 where index + 2 < bytes.count && bytes[index + 1] == 0x80 && (bytes[index + 2] == 0xA8 || bytes[index + 2] == 0xA9):
                    out.append(contentsOf: "\\u202".utf8)
                    out.append(bytes[index + 2] == 0xA8 ? UInt8(ascii: "8") : UInt8(ascii: "9"))
                    index += 2
                default: out.append(byte)
                }
                index += 1
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
