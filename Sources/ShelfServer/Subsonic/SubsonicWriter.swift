import Foundation
import ShelfCore
import ShelfWire

/// Appends one Subsonic answer straight to its bytes, as XML or as JSON: the typed models call
/// the same methods for both formats, so the two cannot disagree, and nothing is built in between.
///
/// XML: an element is `<name attr="…"/>`, or `<name …>children</name>`; a list is its members
/// one after another. JSON: an element is `"name":{…}` with its attributes as typed members, a
/// list is `"name":[{…},…]` (an array even with one member, never written when it has none),
/// and an element's text is its `"value"`.
///
/// The bytes are its own buffer, handed to the response without a copy: a sync page is some
/// 15,000 attributes in 300 KB, and an array's checks per append cost more than the page's reads.
/// Noncopyable, since two copies would share the buffer.
struct SubsonicWriter: ~Copyable, ByteSink {
    private var base: UnsafeMutablePointer<UInt8>
    private var count = 0
    private var capacity: Int
    /// Whether `base` is still this writer's to free (`finish` hands it on).
    private var owned = true
    /// Whether this writes JSON (else XML).
    let json: Bool
    /// XML for a client that declared an API version before OpenSubsonic's (`v` < 1.16.1): the
    /// child elements OpenSubsonic added are left out, since such clients stop reading an album at
    /// the first child that is not a `song`. Attributes are harmless and stay.
    var legacyXML = false

    private enum Frame {
        /// An element; XML needs its name to close it.
        case element(name: String)
        /// A list of `name` members; JSON opens its array at the first member.
        case list(name: String, opened: Bool)
    }

    private var stack: [Frame] = []
    /// XML: a start tag whose attributes may still come (`>` or `/>` not yet written).
    private var tagOpen = false
    /// JSON: the next member follows a sibling and needs a comma.
    private var afterValue = false

    /// A writer with room for `capacity` bytes (it grows as needed).
    init(json: Bool, capacity: Int = 4_096) {
        self.json = json
        self.capacity = max(64, capacity)
        guard let memory = malloc(self.capacity) else { fatalError("out of memory for a \(capacity)-byte answer") }
        base = memory.assumingMemoryBound(to: UInt8.self)
    }

    deinit {
        if owned { free(base) }
    }

    /// The bytes written, as Data that owns them (no copy).
    consuming func finish() -> Data {
        owned = false
        return Data(bytesNoCopy: base, count: count, deallocator: .free)
    }

    /// Writes OpenSubsonic's child elements (`body`), unless this is XML for an older client.
    mutating func openSubsonic(_ body: (inout SubsonicWriter) -> Void) {
        if json || !legacyXML { body(&self) }
    }

    /// What has been written so far, copied (for tests and the index cache's key checks).
    var bytes: [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }

    // MARK: Bytes

    /// Appends one byte.
    @inline(__always)
    mutating func append(_ byte: UInt8) {
        if count == capacity { grow(1) }
        base[count] = byte
        count += 1
    }

    /// Appends `bytes` in one copy.
    @inline(__always)
    mutating func append(bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        if count + bytes.count > capacity { grow(bytes.count) }
        (base + count).update(from: source, count: bytes.count)
        count += bytes.count
    }

    private mutating func grow(_ needed: Int) {
        var next = capacity * 2
        while next < count + needed { next *= 2 }
        guard let memory = realloc(base, next) else { fatalError("out of memory for a \(next)-byte answer") }
        base = memory.assumingMemoryBound(to: UInt8.self)
        capacity = next
    }

    // MARK: The envelope

    /// The document's start: the XML declaration, or the JSON object's opening brace.
    mutating func beginDocument() {
        if json {
            append(UInt8(ascii: "{"))
        } else {
            ascii("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
        }
    }

    /// The document's end.
    mutating func endDocument() {
        if json { append(UInt8(ascii: "}")) }
    }

    // MARK: Elements and lists

    /// Opens a single child element `name` (attributes, text and children follow).
    mutating func open(_ name: String) {
        startChild()
        if json {
            separate()
            key(name)
            append(UInt8(ascii: "{"))
            afterValue = false
        } else {
            append(UInt8(ascii: "<"))
            utf8(name)
            tagOpen = true
        }
        stack.append(.element(name: name))
    }

    /// Closes the element opened last.
    mutating func close() {
        guard case .element(let name)? = stack.popLast() else { return }
        if json {
            append(UInt8(ascii: "}"))
            afterValue = true
        } else if tagOpen {
            ascii("/>")
            tagOpen = false
        } else {
            ascii("</")
            utf8(name)
            append(UInt8(ascii: ">"))
        }
    }

    /// Opens a list whose members are `name` elements (see `item`).
    mutating func openList(_ name: String) {
        stack.append(.list(name: name, opened: false))
    }

    /// Opens the next member of the list opened last.
    mutating func item() {
        guard case .list(let name, let opened)? = stack.last else { return open("item") }
        if json {
            if !opened { openArray(name) }
            separate()
            append(UInt8(ascii: "{"))
            afterValue = false
        } else {
            startChild()
            append(UInt8(ascii: "<"))
            utf8(name)
            tagOpen = true
        }
        stack.append(.element(name: name))
    }

    /// JSON: the current list's `"name":[`, written at its first member so an empty list leaves nothing.
    private mutating func openArray(_ name: String) {
        separate()
        key(name)
        append(UInt8(ascii: "["))
        afterValue = false
        stack[stack.count - 1] = .list(name: name, opened: true)
    }

    /// `models` as a list of `name` elements that JSON always carries, as `[]` when empty (a list
    /// the spec marks required, such as `sonicMatch`).
    mutating func requiredList(_ name: String, _ models: [some SubsonicModel]) {
        openList(name)
        if json && models.isEmpty { openArray(name) }
        for model in models {
            item()
            model.write(to: &self)
            close()
        }
        closeList()
    }

    /// Closes the list opened last.
    mutating func closeList() {
        guard case .list(_, let opened)? = stack.popLast() else { return }
        if json && opened {
            append(UInt8(ascii: "]"))
            afterValue = true
        }
    }

    /// One member of the current list that is only a number (an extension's `versions`): XML
    /// `<versions>1</versions>`, JSON a bare `1` in the array.
    mutating func bareItem(_ value: Int) { bareMember { $0.integer(Int64(value)) } }

    /// One member of the current list that is only a string (a song's `isrc`, `moods`): XML
    /// `<isrc>…</isrc>`, JSON a bare string in the array.
    mutating func bareItem(_ value: String) { bareMember { $0.json ? $0.string(value) : $0.escapedXML(value, attribute: false) } }

    /// A list member with no attributes: `value` writes it bare in JSON, as the element's text in XML.
    private mutating func bareMember(_ value: (inout SubsonicWriter) -> Void) {
        guard case .list(let name, let opened)? = stack.last else { return }
        if json {
            if !opened { openArray(name) }
            separate()
            value(&self)
            afterValue = true
        } else {
            startChild()
            append(UInt8(ascii: "<"))
            utf8(name)
            append(UInt8(ascii: ">"))
            value(&self)
            ascii("</")
            utf8(name)
            append(UInt8(ascii: ">"))
        }
    }

    /// `values` as a list of bare strings named `name` (nothing when there are none).
    mutating func strings(_ name: String, _ values: [String]) {
        guard !values.isEmpty else { return }
        openList(name)
        for value in values { bareItem(value) }
        closeList()
    }

    /// The element's text: XML content, JSON `"value"`. Comes after the attributes.
    mutating func text(_ value: String) {
        if json {
            separate()
            ascii("\"value\":")
            string(value)
            afterValue = true
        } else {
            startChild()
            escapedXML(value, attribute: false)
        }
    }

    // MARK: Attributes

    /// The XML namespace attribute of the root element (JSON has none).
    mutating func namespace(_ uri: StaticString) {
        guard !json else { return }
        ascii(" xmlns=\"")
        ascii(uri)
        append(UInt8(ascii: "\""))
    }

    /// A string attribute.
    mutating func attribute(_ name: StaticString, _ value: String) {
        attributeStart(name, quoted: !json)
        if json { string(value) } else { escapedXML(value, attribute: true) }
        attributeEnd(quoted: !json)
    }

    /// A string attribute when there is a value.
    mutating func attribute(_ name: StaticString, _ value: String?) {
        if let value { attribute(name, value) }
    }

    /// An integer attribute.
    mutating func attribute(_ name: StaticString, _ value: Int) {
        attributeStart(name, quoted: false)
        integer(Int64(value))
        attributeEnd(quoted: false)
    }

    /// An integer attribute when there is a value.
    mutating func attribute(_ name: StaticString, _ value: Int?) {
        if let value { attribute(name, value) }
    }

    /// A boolean attribute.
    mutating func attribute(_ name: StaticString, _ value: Bool) {
        attributeStart(name, quoted: false)
        ascii(value ? "true" : "false")
        attributeEnd(quoted: false)
    }

    /// A number attribute (a gain, an average rating); not finite is written as 0.
    mutating func attribute(_ name: StaticString, _ value: Double) {
        attributeStart(name, quoted: false)
        utf8(value.isFinite ? String(value) : "0")
        attributeEnd(quoted: false)
    }

    /// A date attribute, `2026-12-01T10:02:38Z` (UTC, whole seconds).
    mutating func attribute(_ name: StaticString, _ value: Date) {
        attributeStart(name)
        iso(value)
        attributeEnd()
    }

    /// A date attribute when there is one.
    mutating func attribute(_ name: StaticString, _ value: Date?) {
        if let value { attribute(name, value) }
    }

    /// An ID attribute, `tr-7`: the prefix and the number written without a String between.
    mutating func attribute(_ name: StaticString, _ id: SubsonicID) {
        attributeStart(name)
        let (prefix, number) = id.parts
        prefix.withUTF8Buffer { append(bytes: $0) }
        integer(number)
        attributeEnd()
    }

    /// An ID attribute when there is one.
    mutating func attribute(_ name: StaticString, _ id: SubsonicID?) {
        if let id { attribute(name, id) }
    }

    // MARK: Internals

    /// XML: a child or text closes the parent's start tag first.
    private mutating func startChild() {
        if !json && tagOpen {
            append(UInt8(ascii: ">"))
            tagOpen = false
        }
    }

    private mutating func attributeStart(_ name: StaticString, quoted: Bool = true) {
        if json {
            separate()
            append(UInt8(ascii: "\""))
            name.withUTF8Buffer { append(bytes: $0) }
            ascii(quoted ? "\":\"" : "\":")
        } else {
            append(UInt8(ascii: " "))
            name.withUTF8Buffer { append(bytes: $0) }
            ascii("=\"")
        }
    }

    private mutating func attributeEnd(quoted: Bool = true) {
        if json {
            if quoted { append(UInt8(ascii: "\"")) }
            afterValue = true
        } else {
            append(UInt8(ascii: "\""))
        }
    }

    private mutating func separate() {
        if afterValue { append(UInt8(ascii: ",")) }
    }

    private mutating func key(_ name: String) {
        string(name)
        append(UInt8(ascii: ":"))
    }

    /// A JSON string in quotes, by the server's one escaper (U+2028/U+2029 escaped too, so
    /// JSONP stays valid script).
    private mutating func string(_ value: String) {
        append(UInt8(ascii: "\""))
        JSONWriter.appendEscaped(value, to: &self, lineSeparators: true)
        append(UInt8(ascii: "\""))
    }

    private mutating func ascii(_ text: StaticString) {
        text.withUTF8Buffer { append(bytes: $0) }
    }

    private mutating func utf8(_ text: String) {
        var text = text
        text.withUTF8 { append(bytes: $0) }
    }

    private mutating func integer(_ value: Int64) {
        JSONWriter.appendDecimal(value, to: &self)
    }

    /// `text` escaped for XML content or a quoted attribute. Characters XML 1.0 cannot carry
    /// (controls other than tab and the line ends, U+FFFE, U+FFFF) are dropped; tab and the line
    /// ends are written as references so attribute values keep them.
    private mutating func escapedXML(_ text: String, attribute: Bool) {
        var text = text
        text.withUTF8 { utf8 in
            var runStart = 0
            var index = 0
            while index < utf8.count {
                let byte = utf8[index]
                let replacement: StaticString?
                var skip = 1
                switch byte {
                case UInt8(ascii: "&"): replacement = "&amp;"
                case UInt8(ascii: "<"): replacement = "&lt;"
                case UInt8(ascii: ">"): replacement = "&gt;"
                case UInt8(ascii: "\""): replacement = "&quot;"
                case 0x0A: replacement = "&#10;"
                case 0x0D: replacement = "&#13;"
                case 0x09: replacement = "&#9;"
                case 0..<0x20: replacement = ""
                case 0xEF where index + 2 < utf8.count && utf8[index + 1] == 0xBF && (utf8[index + 2] == 0xBE || utf8[index + 2] == 0xBF):
                    replacement = ""
                    skip = 3
                default:
                    index += 1
                    continue
                }
                if runStart < index { append(bytes: UnsafeBufferPointer(rebasing: utf8[runStart..<index])) }
                if let replacement { replacement.withUTF8Buffer { append(bytes: $0) } }
                index += skip
                runStart = index
            }
            if runStart < utf8.count { append(bytes: UnsafeBufferPointer(rebasing: utf8[runStart...])) }
        }
    }

    /// `2026-12-01T10:02:38Z`, formatted by hand: a sync formats three dates per song.
    private mutating func iso(_ date: Date) {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        if parts.tm_year + 1900 < 0 { append(UInt8(ascii: "-")) }
        digits(Int(abs(parts.tm_year + 1900)), 1)
        append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mon + 1), 2)
        append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mday), 2)
        append(UInt8(ascii: "T"))
        digits(Int(parts.tm_hour), 2)
        append(UInt8(ascii: ":"))
        digits(Int(parts.tm_min), 2)
        append(UInt8(ascii: ":"))
        digits(Int(parts.tm_sec), 2)
        append(UInt8(ascii: "Z"))
    }

    /// `value` (not negative) in decimal, zero-padded to `width` digits.
    private mutating func digits(_ value: Int, _ width: Int) {
        var divisor = 1
        var places = 1
        while value / divisor >= 10 || places < width {
            divisor *= 10
            places += 1
        }
        repeat {
            append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: value / divisor % 10))
            divisor /= 10
        } while divisor > 0
    }
}
