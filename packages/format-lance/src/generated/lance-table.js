// Generated from proto/lance-table.proto by protobufjs-cli 2.7.1 (pbjs -t static-module -w es6 --keep-case --no-create --no-encode --no-verify --no-convert --no-delimited --no-typeurl --no-service).
// Do not edit: regenerate with `pnpm --filter @holdfast/format-lance run proto:gen`.
/*eslint-disable block-scoped-var, id-length, no-control-regex, no-magic-numbers, no-mixed-operators, no-prototype-builtins, no-redeclare, no-shadow, no-var, sort-vars, default-case, jsdoc/require-param*/
import $protobuf from "protobufjs/minimal.js";

// Common aliases
const $Reader = $protobuf.Reader, $util = $protobuf.util;
const $Object = $util.global.Object, $undefined = $util.global.undefined, $Error = $util.global.Error, $RangeError = $util.global.RangeError;

// Exported root namespace
const $root = $protobuf.roots["default"] || ($protobuf.roots["default"] = {});

export const holdfast = $root.holdfast = (() => {

    /**
     * Namespace holdfast.
     * @exports holdfast
     * @namespace
     */
    const holdfast = {};

    holdfast.lance = (function() {

        /**
         * Namespace lance.
         * @memberof holdfast
         * @namespace
         */
        const lance = {};

        lance.Timestamp = (function() {

            /**
             * Properties of a Timestamp.
             * @typedef {Object} holdfast.lance.Timestamp.$Properties
             * @property {number|Long|null} [seconds] Timestamp seconds
             * @property {number|null} [nanos] Timestamp nanos
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of a Timestamp.
             * @memberof holdfast.lance
             * @interface ITimestamp
             * @augments holdfast.lance.Timestamp.$Properties
             * @deprecated Use holdfast.lance.Timestamp.$Properties instead.
             */

            /**
             * Shape of a Timestamp.
             * @typedef {holdfast.lance.Timestamp.$Properties} holdfast.lance.Timestamp.$Shape
             */

            /**
             * Constructs a new Timestamp.
             * @memberof holdfast.lance
             * @classdesc Represents a Timestamp.
             * @constructor
             * @param {holdfast.lance.Timestamp.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            const Timestamp = function (properties) {
                if (properties)
                    for (let keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * Timestamp seconds.
             * @member {number|Long} seconds
             * @memberof holdfast.lance.Timestamp
             * @instance
             */
            Timestamp.prototype.seconds = $util.Long ? $util.Long.fromBits(0,0,false) : 0;

            /**
             * Timestamp nanos.
             * @member {number} nanos
             * @memberof holdfast.lance.Timestamp
             * @instance
             */
            Timestamp.prototype.nanos = 0;

            /**
             * Decodes a Timestamp message from the specified reader or buffer.
             * @function decode
             * @memberof holdfast.lance.Timestamp
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {holdfast.lance.Timestamp & holdfast.lance.Timestamp.$Shape} Timestamp
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            Timestamp.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                let end, message, value;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.holdfast.lance.Timestamp();
                while (reader.pos < end) {
                    let start = reader.pos;
                    let tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    let wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 0)
                                break;
                            if (typeof (value = reader.int64()) === "object" ? value.low || value.high : value !== 0)
                                message.seconds = value;
                            else
                                delete message.seconds;
                            continue;
                        }
                    case 2: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.int32())
                                message.nanos = value;
                            else
                                delete message.nanos;
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            return Timestamp;
        })();

        lance.Manifest = (function() {

            /**
             * Properties of a Manifest.
             * @typedef {Object} holdfast.lance.Manifest.$Properties
             * @property {Array.<holdfast.lance.Field.$Properties>|null} [fields] Manifest fields
             * @property {Array.<holdfast.lance.DataFragment.$Properties>|null} [fragments] Manifest fragments
             * @property {number|Long|null} [version] Manifest version
             * @property {number|Long|null} [index_section] Manifest index_section
             * @property {holdfast.lance.Timestamp.$Properties|null} [timestamp] Manifest timestamp
             * @property {number|Long|null} [reader_feature_flags] Manifest reader_feature_flags
             * @property {number|Long|null} [writer_feature_flags] Manifest writer_feature_flags
             * @property {string|null} [transaction_file] Manifest transaction_file
             * @property {Object.<string,string>|null} [config] Manifest config
             * @property {Array.<holdfast.lance.BasePath.$Properties>|null} [base_paths] Manifest base_paths
             * @property {string|null} [branch] Manifest branch
             * @property {number|Long|null} [transaction_section] Manifest transaction_section
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of a Manifest.
             * @memberof holdfast.lance
             * @interface IManifest
             * @augments holdfast.lance.Manifest.$Properties
             * @deprecated Use holdfast.lance.Manifest.$Properties instead.
             */

            /**
             * Shape of a Manifest.
             * @typedef {holdfast.lance.Manifest.$Properties} holdfast.lance.Manifest.$Shape
             */

            /**
             * Constructs a new Manifest.
             * @memberof holdfast.lance
             * @classdesc Represents a Manifest.
             * @constructor
             * @param {holdfast.lance.Manifest.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            const Manifest = function (properties) {
                this.fields = [];
                this.fragments = [];
                this.config = {};
                this.base_paths = [];
                if (properties)
                    for (let keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * Manifest fields.
             * @member {Array.<holdfast.lance.Field.$Properties>} fields
             * @memberof holdfast.lance.Manifest
             * @instance
             */
            Manifest.prototype.fields = $util.emptyArray;

            /**
             * Manifest fragments.
             * @member {Array.<holdfast.lance.DataFragment.$Properties>} fragments
             * @memberof holdfast.lance.Manifest
             * @instance
             */
            Manifest.prototype.fragments = $util.emptyArray;

            /**
             * Manifest version.
             * @member {number|Long} version
             * @memberof holdfast.lance.Manifest
             * @instance
             */
            Manifest.prototype.version = $util.Long ? $util.Long.fromBits(0,0,true) : 0;

            /**
             * Manifest index_section.
             * @member {number|Long|null|undefined} index_section
             * @memberof holdfast.lance.Manifest
             * @instance
             */
            Manifest.prototype.index_section = null;

            /**
             * Manifest timestamp.
             * @member {holdfast.lance.Timestamp.$Properties|null|undefined} timestamp
             * @memberof holdfast.lance.Manifest
             * @instance
             */
            Manifest.prototype.timestamp = null;

            /**
             * Manifest reader_feature_flags.
             * @member {number|Long} reader_feature_flags
             * @memberof holdfast.lance.Manifest
             * @instance
             */
            Manifest.prototype.reader_feature_flags = $util.Long ? $util.Long.fromBits(0,0,true) : 0;

            /**
             * Manifest writer_feature_flags.
             * @member {number|Long} writer_feature_flags
             * @memberof holdfast.lance.Manifest
             * @instance
             */
            Manifest.prototype.writer_feature_flags = $util.Long ? $util.Long.fromBits(0,0,true) : 0;

            /**
             * Manifest transaction_file.
             * @member {string} transaction_file
             * @memberof holdfast.lance.Manifest
             * @instance
             */
            Manifest.prototype.transaction_file = "";

            /**
             * Manifest config.
             * @member {Object.<string,string>} config
             * @memberof holdfast.lance.Manifest
             * @instance
             */
            Manifest.prototype.config = $util.emptyObject;

            /**
             * Manifest base_paths.
             * @member {Array.<holdfast.lance.BasePath.$Properties>} base_paths
             * @memberof holdfast.lance.Manifest
             * @instance
             */
            Manifest.prototype.base_paths = $util.emptyArray;

            /**
             * Manifest branch.
             * @member {string|null|undefined} branch
             * @memberof holdfast.lance.Manifest
             * @instance
             */
            Manifest.prototype.branch = null;

            /**
             * Manifest transaction_section.
             * @member {number|Long|null|undefined} transaction_section
             * @memberof holdfast.lance.Manifest
             * @instance
             */
            Manifest.prototype.transaction_section = null;

            // OneOf field names bound to virtual getters and setters
            let $oneOfFields;

            // Virtual OneOf for proto3 optional field
            $Object.defineProperty(Manifest.prototype, "_index_section", {
                get: $util.oneOfGetter($oneOfFields = ["index_section"]),
                set: $util.oneOfSetter($oneOfFields)
            });

            // Virtual OneOf for proto3 optional field
            $Object.defineProperty(Manifest.prototype, "_branch", {
                get: $util.oneOfGetter($oneOfFields = ["branch"]),
                set: $util.oneOfSetter($oneOfFields)
            });

            // Virtual OneOf for proto3 optional field
            $Object.defineProperty(Manifest.prototype, "_transaction_section", {
                get: $util.oneOfGetter($oneOfFields = ["transaction_section"]),
                set: $util.oneOfSetter($oneOfFields)
            });

            /**
             * Decodes a Manifest message from the specified reader or buffer.
             * @function decode
             * @memberof holdfast.lance.Manifest
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {holdfast.lance.Manifest & holdfast.lance.Manifest.$Shape} Manifest
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            Manifest.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                let end, message, key, value;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.holdfast.lance.Manifest();
                while (reader.pos < end) {
                    let start = reader.pos;
                    let tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    let wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 2)
                                break;
                            if (!(message.fields && message.fields.length))
                                message.fields = [];
                            message.fields.push($root.holdfast.lance.Field.decode(reader, reader.size(), $undefined, _depth + 1));
                            continue;
                        }
                    case 2: {
                            if (wireType !== 2)
                                break;
                            if (!(message.fragments && message.fragments.length))
                                message.fragments = [];
                            message.fragments.push($root.holdfast.lance.DataFragment.decode(reader, reader.size(), $undefined, _depth + 1));
                            continue;
                        }
                    case 3: {
                            if (wireType !== 0)
                                break;
                            if (typeof (value = reader.uint64()) === "object" ? value.low || value.high : value !== 0)
                                message.version = value;
                            else
                                delete message.version;
                            continue;
                        }
                    case 6: {
                            if (wireType !== 0)
                                break;
                            message.index_section = reader.uint64();
                            message._index_section = "index_section";
                            continue;
                        }
                    case 7: {
                            if (wireType !== 2)
                                break;
                            message.timestamp = $root.holdfast.lance.Timestamp.decode(reader, reader.size(), $undefined, _depth + 1, message.timestamp);
                            continue;
                        }
                    case 9: {
                            if (wireType !== 0)
                                break;
                            if (typeof (value = reader.uint64()) === "object" ? value.low || value.high : value !== 0)
                                message.reader_feature_flags = value;
                            else
                                delete message.reader_feature_flags;
                            continue;
                        }
                    case 10: {
                            if (wireType !== 0)
                                break;
                            if (typeof (value = reader.uint64()) === "object" ? value.low || value.high : value !== 0)
                                message.writer_feature_flags = value;
                            else
                                delete message.writer_feature_flags;
                            continue;
                        }
                    case 12: {
                            if (wireType !== 2)
                                break;
                            if ((value = reader.stringVerify()).length)
                                message.transaction_file = value;
                            else
                                delete message.transaction_file;
                            continue;
                        }
                    case 16: {
                            if (wireType !== 2)
                                break;
                            if (message.config === $util.emptyObject)
                                message.config = {};
                            let end2 = reader.size() + reader.pos;
                            if (end2 > reader.len)
                                throw $RangeError("index out of range");
                            reader.len = end2;
                            key = "";
                            value = "";
                            while (reader.pos < end2) {
                                let tag2 = reader.tag();
                                wireType = tag2 & 7;
                                switch (tag2 >>>= 3) {
                                case 1:
                                    if (wireType !== 2)
                                        break;
                                    key = reader.stringVerify();
                                    continue;
                                case 2:
                                    if (wireType !== 2)
                                        break;
                                    value = reader.stringVerify();
                                    continue;
                                }
                                reader.skipType(wireType, _depth, tag2);
                            }
                            if (reader.pos !== end2)
                                throw $RangeError("index out of range");
                            reader.len = end;
                            if (key === "__proto__")
                                $util.makeProp(message.config, key);
                            message.config[key] = value;
                            continue;
                        }
                    case 18: {
                            if (wireType !== 2)
                                break;
                            if (!(message.base_paths && message.base_paths.length))
                                message.base_paths = [];
                            message.base_paths.push($root.holdfast.lance.BasePath.decode(reader, reader.size(), $undefined, _depth + 1));
                            continue;
                        }
                    case 20: {
                            if (wireType !== 2)
                                break;
                            message.branch = reader.stringVerify();
                            message._branch = "branch";
                            continue;
                        }
                    case 21: {
                            if (wireType !== 0)
                                break;
                            message.transaction_section = reader.uint64();
                            message._transaction_section = "transaction_section";
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            return Manifest;
        })();

        lance.Field = (function() {

            /**
             * Properties of a Field.
             * @typedef {Object} holdfast.lance.Field.$Properties
             * @property {string|null} [name] Field name
             * @property {string|null} [logical_type] Field logical_type
             * @property {string|null} [extension_name] Field extension_name
             * @property {Object.<string,Uint8Array>|null} [metadata] Field metadata
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of a Field.
             * @memberof holdfast.lance
             * @interface IField
             * @augments holdfast.lance.Field.$Properties
             * @deprecated Use holdfast.lance.Field.$Properties instead.
             */

            /**
             * Shape of a Field.
             * @typedef {holdfast.lance.Field.$Properties} holdfast.lance.Field.$Shape
             */

            /**
             * Constructs a new Field.
             * @memberof holdfast.lance
             * @classdesc Represents a Field.
             * @constructor
             * @param {holdfast.lance.Field.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            const Field = function (properties) {
                this.metadata = {};
                if (properties)
                    for (let keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * Field name.
             * @member {string} name
             * @memberof holdfast.lance.Field
             * @instance
             */
            Field.prototype.name = "";

            /**
             * Field logical_type.
             * @member {string} logical_type
             * @memberof holdfast.lance.Field
             * @instance
             */
            Field.prototype.logical_type = "";

            /**
             * Field extension_name.
             * @member {string} extension_name
             * @memberof holdfast.lance.Field
             * @instance
             */
            Field.prototype.extension_name = "";

            /**
             * Field metadata.
             * @member {Object.<string,Uint8Array>} metadata
             * @memberof holdfast.lance.Field
             * @instance
             */
            Field.prototype.metadata = $util.emptyObject;

            /**
             * Decodes a Field message from the specified reader or buffer.
             * @function decode
             * @memberof holdfast.lance.Field
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {holdfast.lance.Field & holdfast.lance.Field.$Shape} Field
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            Field.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                let end, message, key, value;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.holdfast.lance.Field();
                while (reader.pos < end) {
                    let start = reader.pos;
                    let tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    let wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 2: {
                            if (wireType !== 2)
                                break;
                            if ((value = reader.stringVerify()).length)
                                message.name = value;
                            else
                                delete message.name;
                            continue;
                        }
                    case 5: {
                            if (wireType !== 2)
                                break;
                            if ((value = reader.stringVerify()).length)
                                message.logical_type = value;
                            else
                                delete message.logical_type;
                            continue;
                        }
                    case 9: {
                            if (wireType !== 2)
                                break;
                            if ((value = reader.stringVerify()).length)
                                message.extension_name = value;
                            else
                                delete message.extension_name;
                            continue;
                        }
                    case 10: {
                            if (wireType !== 2)
                                break;
                            if (message.metadata === $util.emptyObject)
                                message.metadata = {};
                            let end2 = reader.size() + reader.pos;
                            if (end2 > reader.len)
                                throw $RangeError("index out of range");
                            reader.len = end2;
                            key = "";
                            value = [];
                            while (reader.pos < end2) {
                                let tag2 = reader.tag();
                                wireType = tag2 & 7;
                                switch (tag2 >>>= 3) {
                                case 1:
                                    if (wireType !== 2)
                                        break;
                                    key = reader.stringVerify();
                                    continue;
                                case 2:
                                    if (wireType !== 2)
                                        break;
                                    value = reader.bytes();
                                    continue;
                                }
                                reader.skipType(wireType, _depth, tag2);
                            }
                            if (reader.pos !== end2)
                                throw $RangeError("index out of range");
                            reader.len = end;
                            if (key === "__proto__")
                                $util.makeProp(message.metadata, key);
                            message.metadata[key] = value;
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            return Field;
        })();

        lance.BasePath = (function() {

            /**
             * Properties of a BasePath.
             * @typedef {Object} holdfast.lance.BasePath.$Properties
             * @property {number|null} [id] BasePath id
             * @property {string|null} [name] BasePath name
             * @property {boolean|null} [is_dataset_root] BasePath is_dataset_root
             * @property {string|null} [path] BasePath path
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of a BasePath.
             * @memberof holdfast.lance
             * @interface IBasePath
             * @augments holdfast.lance.BasePath.$Properties
             * @deprecated Use holdfast.lance.BasePath.$Properties instead.
             */

            /**
             * Shape of a BasePath.
             * @typedef {holdfast.lance.BasePath.$Properties} holdfast.lance.BasePath.$Shape
             */

            /**
             * Constructs a new BasePath.
             * @memberof holdfast.lance
             * @classdesc Represents a BasePath.
             * @constructor
             * @param {holdfast.lance.BasePath.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            const BasePath = function (properties) {
                if (properties)
                    for (let keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * BasePath id.
             * @member {number} id
             * @memberof holdfast.lance.BasePath
             * @instance
             */
            BasePath.prototype.id = 0;

            /**
             * BasePath name.
             * @member {string|null|undefined} name
             * @memberof holdfast.lance.BasePath
             * @instance
             */
            BasePath.prototype.name = null;

            /**
             * BasePath is_dataset_root.
             * @member {boolean} is_dataset_root
             * @memberof holdfast.lance.BasePath
             * @instance
             */
            BasePath.prototype.is_dataset_root = false;

            /**
             * BasePath path.
             * @member {string} path
             * @memberof holdfast.lance.BasePath
             * @instance
             */
            BasePath.prototype.path = "";

            // OneOf field names bound to virtual getters and setters
            let $oneOfFields;

            // Virtual OneOf for proto3 optional field
            $Object.defineProperty(BasePath.prototype, "_name", {
                get: $util.oneOfGetter($oneOfFields = ["name"]),
                set: $util.oneOfSetter($oneOfFields)
            });

            /**
             * Decodes a BasePath message from the specified reader or buffer.
             * @function decode
             * @memberof holdfast.lance.BasePath
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {holdfast.lance.BasePath & holdfast.lance.BasePath.$Shape} BasePath
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            BasePath.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                let end, message, value;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.holdfast.lance.BasePath();
                while (reader.pos < end) {
                    let start = reader.pos;
                    let tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    let wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.uint32())
                                message.id = value;
                            else
                                delete message.id;
                            continue;
                        }
                    case 2: {
                            if (wireType !== 2)
                                break;
                            message.name = reader.stringVerify();
                            message._name = "name";
                            continue;
                        }
                    case 3: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.bool())
                                message.is_dataset_root = value;
                            else
                                delete message.is_dataset_root;
                            continue;
                        }
                    case 4: {
                            if (wireType !== 2)
                                break;
                            if ((value = reader.stringVerify()).length)
                                message.path = value;
                            else
                                delete message.path;
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            return BasePath;
        })();

        lance.DataFragment = (function() {

            /**
             * Properties of a DataFragment.
             * @typedef {Object} holdfast.lance.DataFragment.$Properties
             * @property {number|Long|null} [id] DataFragment id
             * @property {Array.<holdfast.lance.DataFile.$Properties>|null} [files] DataFragment files
             * @property {holdfast.lance.DeletionFile.$Properties|null} [deletion_file] DataFragment deletion_file
             * @property {holdfast.lance.ExternalFile.$Properties|null} [external_row_ids] DataFragment external_row_ids
             * @property {holdfast.lance.ExternalFile.$Properties|null} [external_last_updated_at_versions] DataFragment external_last_updated_at_versions
             * @property {holdfast.lance.ExternalFile.$Properties|null} [external_created_at_versions] DataFragment external_created_at_versions
             * @property {Array.<holdfast.lance.DataOverlayFile.$Properties>|null} [overlays] DataFragment overlays
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of a DataFragment.
             * @memberof holdfast.lance
             * @interface IDataFragment
             * @augments holdfast.lance.DataFragment.$Properties
             * @deprecated Use holdfast.lance.DataFragment.$Properties instead.
             */

            /**
             * Shape of a DataFragment.
             * @typedef {holdfast.lance.DataFragment.$Properties} holdfast.lance.DataFragment.$Shape
             */

            /**
             * Constructs a new DataFragment.
             * @memberof holdfast.lance
             * @classdesc Represents a DataFragment.
             * @constructor
             * @param {holdfast.lance.DataFragment.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            const DataFragment = function (properties) {
                this.files = [];
                this.overlays = [];
                if (properties)
                    for (let keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * DataFragment id.
             * @member {number|Long} id
             * @memberof holdfast.lance.DataFragment
             * @instance
             */
            DataFragment.prototype.id = $util.Long ? $util.Long.fromBits(0,0,true) : 0;

            /**
             * DataFragment files.
             * @member {Array.<holdfast.lance.DataFile.$Properties>} files
             * @memberof holdfast.lance.DataFragment
             * @instance
             */
            DataFragment.prototype.files = $util.emptyArray;

            /**
             * DataFragment deletion_file.
             * @member {holdfast.lance.DeletionFile.$Properties|null|undefined} deletion_file
             * @memberof holdfast.lance.DataFragment
             * @instance
             */
            DataFragment.prototype.deletion_file = null;

            /**
             * DataFragment external_row_ids.
             * @member {holdfast.lance.ExternalFile.$Properties|null|undefined} external_row_ids
             * @memberof holdfast.lance.DataFragment
             * @instance
             */
            DataFragment.prototype.external_row_ids = null;

            /**
             * DataFragment external_last_updated_at_versions.
             * @member {holdfast.lance.ExternalFile.$Properties|null|undefined} external_last_updated_at_versions
             * @memberof holdfast.lance.DataFragment
             * @instance
             */
            DataFragment.prototype.external_last_updated_at_versions = null;

            /**
             * DataFragment external_created_at_versions.
             * @member {holdfast.lance.ExternalFile.$Properties|null|undefined} external_created_at_versions
             * @memberof holdfast.lance.DataFragment
             * @instance
             */
            DataFragment.prototype.external_created_at_versions = null;

            /**
             * DataFragment overlays.
             * @member {Array.<holdfast.lance.DataOverlayFile.$Properties>} overlays
             * @memberof holdfast.lance.DataFragment
             * @instance
             */
            DataFragment.prototype.overlays = $util.emptyArray;

            /**
             * Decodes a DataFragment message from the specified reader or buffer.
             * @function decode
             * @memberof holdfast.lance.DataFragment
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {holdfast.lance.DataFragment & holdfast.lance.DataFragment.$Shape} DataFragment
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            DataFragment.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                let end, message, value;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.holdfast.lance.DataFragment();
                while (reader.pos < end) {
                    let start = reader.pos;
                    let tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    let wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 0)
                                break;
                            if (typeof (value = reader.uint64()) === "object" ? value.low || value.high : value !== 0)
                                message.id = value;
                            else
                                delete message.id;
                            continue;
                        }
                    case 2: {
                            if (wireType !== 2)
                                break;
                            if (!(message.files && message.files.length))
                                message.files = [];
                            message.files.push($root.holdfast.lance.DataFile.decode(reader, reader.size(), $undefined, _depth + 1));
                            continue;
                        }
                    case 3: {
                            if (wireType !== 2)
                                break;
                            message.deletion_file = $root.holdfast.lance.DeletionFile.decode(reader, reader.size(), $undefined, _depth + 1, message.deletion_file);
                            continue;
                        }
                    case 6: {
                            if (wireType !== 2)
                                break;
                            message.external_row_ids = $root.holdfast.lance.ExternalFile.decode(reader, reader.size(), $undefined, _depth + 1, message.external_row_ids);
                            continue;
                        }
                    case 8: {
                            if (wireType !== 2)
                                break;
                            message.external_last_updated_at_versions = $root.holdfast.lance.ExternalFile.decode(reader, reader.size(), $undefined, _depth + 1, message.external_last_updated_at_versions);
                            continue;
                        }
                    case 10: {
                            if (wireType !== 2)
                                break;
                            message.external_created_at_versions = $root.holdfast.lance.ExternalFile.decode(reader, reader.size(), $undefined, _depth + 1, message.external_created_at_versions);
                            continue;
                        }
                    case 11: {
                            if (wireType !== 2)
                                break;
                            if (!(message.overlays && message.overlays.length))
                                message.overlays = [];
                            message.overlays.push($root.holdfast.lance.DataOverlayFile.decode(reader, reader.size(), $undefined, _depth + 1));
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            return DataFragment;
        })();

        lance.DataOverlayFile = (function() {

            /**
             * Properties of a DataOverlayFile.
             * @typedef {Object} holdfast.lance.DataOverlayFile.$Properties
             * @property {holdfast.lance.DataFile.$Properties|null} [data_file] DataOverlayFile data_file
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of a DataOverlayFile.
             * @memberof holdfast.lance
             * @interface IDataOverlayFile
             * @augments holdfast.lance.DataOverlayFile.$Properties
             * @deprecated Use holdfast.lance.DataOverlayFile.$Properties instead.
             */

            /**
             * Shape of a DataOverlayFile.
             * @typedef {holdfast.lance.DataOverlayFile.$Properties} holdfast.lance.DataOverlayFile.$Shape
             */

            /**
             * Constructs a new DataOverlayFile.
             * @memberof holdfast.lance
             * @classdesc Represents a DataOverlayFile.
             * @constructor
             * @param {holdfast.lance.DataOverlayFile.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            const DataOverlayFile = function (properties) {
                if (properties)
                    for (let keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * DataOverlayFile data_file.
             * @member {holdfast.lance.DataFile.$Properties|null|undefined} data_file
             * @memberof holdfast.lance.DataOverlayFile
             * @instance
             */
            DataOverlayFile.prototype.data_file = null;

            /**
             * Decodes a DataOverlayFile message from the specified reader or buffer.
             * @function decode
             * @memberof holdfast.lance.DataOverlayFile
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {holdfast.lance.DataOverlayFile & holdfast.lance.DataOverlayFile.$Shape} DataOverlayFile
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            DataOverlayFile.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                let end, message, value;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.holdfast.lance.DataOverlayFile();
                while (reader.pos < end) {
                    let start = reader.pos;
                    let tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    let wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 2)
                                break;
                            message.data_file = $root.holdfast.lance.DataFile.decode(reader, reader.size(), $undefined, _depth + 1, message.data_file);
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            return DataOverlayFile;
        })();

        lance.DataFile = (function() {

            /**
             * Properties of a DataFile.
             * @typedef {Object} holdfast.lance.DataFile.$Properties
             * @property {string|null} [path] DataFile path
             * @property {number|Long|null} [file_size_bytes] DataFile file_size_bytes
             * @property {number|null} [base_id] DataFile base_id
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of a DataFile.
             * @memberof holdfast.lance
             * @interface IDataFile
             * @augments holdfast.lance.DataFile.$Properties
             * @deprecated Use holdfast.lance.DataFile.$Properties instead.
             */

            /**
             * Shape of a DataFile.
             * @typedef {holdfast.lance.DataFile.$Properties} holdfast.lance.DataFile.$Shape
             */

            /**
             * Constructs a new DataFile.
             * @memberof holdfast.lance
             * @classdesc Represents a DataFile.
             * @constructor
             * @param {holdfast.lance.DataFile.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            const DataFile = function (properties) {
                if (properties)
                    for (let keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * DataFile path.
             * @member {string} path
             * @memberof holdfast.lance.DataFile
             * @instance
             */
            DataFile.prototype.path = "";

            /**
             * DataFile file_size_bytes.
             * @member {number|Long} file_size_bytes
             * @memberof holdfast.lance.DataFile
             * @instance
             */
            DataFile.prototype.file_size_bytes = $util.Long ? $util.Long.fromBits(0,0,true) : 0;

            /**
             * DataFile base_id.
             * @member {number|null|undefined} base_id
             * @memberof holdfast.lance.DataFile
             * @instance
             */
            DataFile.prototype.base_id = null;

            // OneOf field names bound to virtual getters and setters
            let $oneOfFields;

            // Virtual OneOf for proto3 optional field
            $Object.defineProperty(DataFile.prototype, "_base_id", {
                get: $util.oneOfGetter($oneOfFields = ["base_id"]),
                set: $util.oneOfSetter($oneOfFields)
            });

            /**
             * Decodes a DataFile message from the specified reader or buffer.
             * @function decode
             * @memberof holdfast.lance.DataFile
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {holdfast.lance.DataFile & holdfast.lance.DataFile.$Shape} DataFile
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            DataFile.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                let end, message, value;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.holdfast.lance.DataFile();
                while (reader.pos < end) {
                    let start = reader.pos;
                    let tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    let wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 2)
                                break;
                            if ((value = reader.stringVerify()).length)
                                message.path = value;
                            else
                                delete message.path;
                            continue;
                        }
                    case 6: {
                            if (wireType !== 0)
                                break;
                            if (typeof (value = reader.uint64()) === "object" ? value.low || value.high : value !== 0)
                                message.file_size_bytes = value;
                            else
                                delete message.file_size_bytes;
                            continue;
                        }
                    case 7: {
                            if (wireType !== 0)
                                break;
                            message.base_id = reader.uint32();
                            message._base_id = "base_id";
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            return DataFile;
        })();

        lance.DeletionFile = (function() {

            /**
             * Properties of a DeletionFile.
             * @typedef {Object} holdfast.lance.DeletionFile.$Properties
             * @property {number|null} [file_type] DeletionFile file_type
             * @property {number|Long|null} [read_version] DeletionFile read_version
             * @property {number|Long|null} [id] DeletionFile id
             * @property {number|null} [base_id] DeletionFile base_id
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of a DeletionFile.
             * @memberof holdfast.lance
             * @interface IDeletionFile
             * @augments holdfast.lance.DeletionFile.$Properties
             * @deprecated Use holdfast.lance.DeletionFile.$Properties instead.
             */

            /**
             * Shape of a DeletionFile.
             * @typedef {holdfast.lance.DeletionFile.$Properties} holdfast.lance.DeletionFile.$Shape
             */

            /**
             * Constructs a new DeletionFile.
             * @memberof holdfast.lance
             * @classdesc Represents a DeletionFile.
             * @constructor
             * @param {holdfast.lance.DeletionFile.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            const DeletionFile = function (properties) {
                if (properties)
                    for (let keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * DeletionFile file_type.
             * @member {number} file_type
             * @memberof holdfast.lance.DeletionFile
             * @instance
             */
            DeletionFile.prototype.file_type = 0;

            /**
             * DeletionFile read_version.
             * @member {number|Long} read_version
             * @memberof holdfast.lance.DeletionFile
             * @instance
             */
            DeletionFile.prototype.read_version = $util.Long ? $util.Long.fromBits(0,0,true) : 0;

            /**
             * DeletionFile id.
             * @member {number|Long} id
             * @memberof holdfast.lance.DeletionFile
             * @instance
             */
            DeletionFile.prototype.id = $util.Long ? $util.Long.fromBits(0,0,true) : 0;

            /**
             * DeletionFile base_id.
             * @member {number|null|undefined} base_id
             * @memberof holdfast.lance.DeletionFile
             * @instance
             */
            DeletionFile.prototype.base_id = null;

            // OneOf field names bound to virtual getters and setters
            let $oneOfFields;

            // Virtual OneOf for proto3 optional field
            $Object.defineProperty(DeletionFile.prototype, "_base_id", {
                get: $util.oneOfGetter($oneOfFields = ["base_id"]),
                set: $util.oneOfSetter($oneOfFields)
            });

            /**
             * Decodes a DeletionFile message from the specified reader or buffer.
             * @function decode
             * @memberof holdfast.lance.DeletionFile
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {holdfast.lance.DeletionFile & holdfast.lance.DeletionFile.$Shape} DeletionFile
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            DeletionFile.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                let end, message, value;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.holdfast.lance.DeletionFile();
                while (reader.pos < end) {
                    let start = reader.pos;
                    let tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    let wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 0)
                                break;
                            if (value = reader.uint32())
                                message.file_type = value;
                            else
                                delete message.file_type;
                            continue;
                        }
                    case 2: {
                            if (wireType !== 0)
                                break;
                            if (typeof (value = reader.uint64()) === "object" ? value.low || value.high : value !== 0)
                                message.read_version = value;
                            else
                                delete message.read_version;
                            continue;
                        }
                    case 3: {
                            if (wireType !== 0)
                                break;
                            if (typeof (value = reader.uint64()) === "object" ? value.low || value.high : value !== 0)
                                message.id = value;
                            else
                                delete message.id;
                            continue;
                        }
                    case 7: {
                            if (wireType !== 0)
                                break;
                            message.base_id = reader.uint32();
                            message._base_id = "base_id";
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            return DeletionFile;
        })();

        lance.ExternalFile = (function() {

            /**
             * Properties of an ExternalFile.
             * @typedef {Object} holdfast.lance.ExternalFile.$Properties
             * @property {string|null} [path] ExternalFile path
             * @property {number|Long|null} [offset] ExternalFile offset
             * @property {number|Long|null} [size] ExternalFile size
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of an ExternalFile.
             * @memberof holdfast.lance
             * @interface IExternalFile
             * @augments holdfast.lance.ExternalFile.$Properties
             * @deprecated Use holdfast.lance.ExternalFile.$Properties instead.
             */

            /**
             * Shape of an ExternalFile.
             * @typedef {holdfast.lance.ExternalFile.$Properties} holdfast.lance.ExternalFile.$Shape
             */

            /**
             * Constructs a new ExternalFile.
             * @memberof holdfast.lance
             * @classdesc Represents an ExternalFile.
             * @constructor
             * @param {holdfast.lance.ExternalFile.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            const ExternalFile = function (properties) {
                if (properties)
                    for (let keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * ExternalFile path.
             * @member {string} path
             * @memberof holdfast.lance.ExternalFile
             * @instance
             */
            ExternalFile.prototype.path = "";

            /**
             * ExternalFile offset.
             * @member {number|Long} offset
             * @memberof holdfast.lance.ExternalFile
             * @instance
             */
            ExternalFile.prototype.offset = $util.Long ? $util.Long.fromBits(0,0,true) : 0;

            /**
             * ExternalFile size.
             * @member {number|Long} size
             * @memberof holdfast.lance.ExternalFile
             * @instance
             */
            ExternalFile.prototype.size = $util.Long ? $util.Long.fromBits(0,0,true) : 0;

            /**
             * Decodes an ExternalFile message from the specified reader or buffer.
             * @function decode
             * @memberof holdfast.lance.ExternalFile
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {holdfast.lance.ExternalFile & holdfast.lance.ExternalFile.$Shape} ExternalFile
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            ExternalFile.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                let end, message, value;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.holdfast.lance.ExternalFile();
                while (reader.pos < end) {
                    let start = reader.pos;
                    let tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    let wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 2)
                                break;
                            if ((value = reader.stringVerify()).length)
                                message.path = value;
                            else
                                delete message.path;
                            continue;
                        }
                    case 2: {
                            if (wireType !== 0)
                                break;
                            if (typeof (value = reader.uint64()) === "object" ? value.low || value.high : value !== 0)
                                message.offset = value;
                            else
                                delete message.offset;
                            continue;
                        }
                    case 3: {
                            if (wireType !== 0)
                                break;
                            if (typeof (value = reader.uint64()) === "object" ? value.low || value.high : value !== 0)
                                message.size = value;
                            else
                                delete message.size;
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            return ExternalFile;
        })();

        lance.UUID = (function() {

            /**
             * Properties of a UUID.
             * @typedef {Object} holdfast.lance.UUID.$Properties
             * @property {Uint8Array|null} [uuid] UUID uuid
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of a UUID.
             * @memberof holdfast.lance
             * @interface IUUID
             * @augments holdfast.lance.UUID.$Properties
             * @deprecated Use holdfast.lance.UUID.$Properties instead.
             */

            /**
             * Shape of a UUID.
             * @typedef {holdfast.lance.UUID.$Properties} holdfast.lance.UUID.$Shape
             */

            /**
             * Constructs a new UUID.
             * @memberof holdfast.lance
             * @classdesc Represents a UUID.
             * @constructor
             * @param {holdfast.lance.UUID.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            const UUID = function (properties) {
                if (properties)
                    for (let keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * UUID uuid.
             * @member {Uint8Array} uuid
             * @memberof holdfast.lance.UUID
             * @instance
             */
            UUID.prototype.uuid = $util.newBuffer([]);

            /**
             * Decodes a UUID message from the specified reader or buffer.
             * @function decode
             * @memberof holdfast.lance.UUID
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {holdfast.lance.UUID & holdfast.lance.UUID.$Shape} UUID
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            UUID.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                let end, message, value;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.holdfast.lance.UUID();
                while (reader.pos < end) {
                    let start = reader.pos;
                    let tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    let wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 2)
                                break;
                            if ((value = reader.bytes()).length)
                                message.uuid = value;
                            else
                                delete message.uuid;
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            return UUID;
        })();

        lance.IndexMetadata = (function() {

            /**
             * Properties of an IndexMetadata.
             * @typedef {Object} holdfast.lance.IndexMetadata.$Properties
             * @property {holdfast.lance.UUID.$Properties|null} [uuid] IndexMetadata uuid
             * @property {string|null} [name] IndexMetadata name
             * @property {number|Long|null} [dataset_version] IndexMetadata dataset_version
             * @property {number|null} [base_id] IndexMetadata base_id
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of an IndexMetadata.
             * @memberof holdfast.lance
             * @interface IIndexMetadata
             * @augments holdfast.lance.IndexMetadata.$Properties
             * @deprecated Use holdfast.lance.IndexMetadata.$Properties instead.
             */

            /**
             * Shape of an IndexMetadata.
             * @typedef {holdfast.lance.IndexMetadata.$Properties} holdfast.lance.IndexMetadata.$Shape
             */

            /**
             * Constructs a new IndexMetadata.
             * @memberof holdfast.lance
             * @classdesc Represents an IndexMetadata.
             * @constructor
             * @param {holdfast.lance.IndexMetadata.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            const IndexMetadata = function (properties) {
                if (properties)
                    for (let keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * IndexMetadata uuid.
             * @member {holdfast.lance.UUID.$Properties|null|undefined} uuid
             * @memberof holdfast.lance.IndexMetadata
             * @instance
             */
            IndexMetadata.prototype.uuid = null;

            /**
             * IndexMetadata name.
             * @member {string} name
             * @memberof holdfast.lance.IndexMetadata
             * @instance
             */
            IndexMetadata.prototype.name = "";

            /**
             * IndexMetadata dataset_version.
             * @member {number|Long} dataset_version
             * @memberof holdfast.lance.IndexMetadata
             * @instance
             */
            IndexMetadata.prototype.dataset_version = $util.Long ? $util.Long.fromBits(0,0,true) : 0;

            /**
             * IndexMetadata base_id.
             * @member {number|null|undefined} base_id
             * @memberof holdfast.lance.IndexMetadata
             * @instance
             */
            IndexMetadata.prototype.base_id = null;

            // OneOf field names bound to virtual getters and setters
            let $oneOfFields;

            // Virtual OneOf for proto3 optional field
            $Object.defineProperty(IndexMetadata.prototype, "_base_id", {
                get: $util.oneOfGetter($oneOfFields = ["base_id"]),
                set: $util.oneOfSetter($oneOfFields)
            });

            /**
             * Decodes an IndexMetadata message from the specified reader or buffer.
             * @function decode
             * @memberof holdfast.lance.IndexMetadata
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {holdfast.lance.IndexMetadata & holdfast.lance.IndexMetadata.$Shape} IndexMetadata
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            IndexMetadata.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                let end, message, value;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.holdfast.lance.IndexMetadata();
                while (reader.pos < end) {
                    let start = reader.pos;
                    let tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    let wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 2)
                                break;
                            message.uuid = $root.holdfast.lance.UUID.decode(reader, reader.size(), $undefined, _depth + 1, message.uuid);
                            continue;
                        }
                    case 3: {
                            if (wireType !== 2)
                                break;
                            if ((value = reader.stringVerify()).length)
                                message.name = value;
                            else
                                delete message.name;
                            continue;
                        }
                    case 4: {
                            if (wireType !== 0)
                                break;
                            if (typeof (value = reader.uint64()) === "object" ? value.low || value.high : value !== 0)
                                message.dataset_version = value;
                            else
                                delete message.dataset_version;
                            continue;
                        }
                    case 9: {
                            if (wireType !== 0)
                                break;
                            message.base_id = reader.uint32();
                            message._base_id = "base_id";
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            return IndexMetadata;
        })();

        lance.IndexSection = (function() {

            /**
             * Properties of an IndexSection.
             * @typedef {Object} holdfast.lance.IndexSection.$Properties
             * @property {Array.<holdfast.lance.IndexMetadata.$Properties>|null} [indices] IndexSection indices
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */

            /**
             * Properties of an IndexSection.
             * @memberof holdfast.lance
             * @interface IIndexSection
             * @augments holdfast.lance.IndexSection.$Properties
             * @deprecated Use holdfast.lance.IndexSection.$Properties instead.
             */

            /**
             * Shape of an IndexSection.
             * @typedef {holdfast.lance.IndexSection.$Properties} holdfast.lance.IndexSection.$Shape
             */

            /**
             * Constructs a new IndexSection.
             * @memberof holdfast.lance
             * @classdesc Represents an IndexSection.
             * @constructor
             * @param {holdfast.lance.IndexSection.$Properties=} [properties] Properties to set
             * @property {Array.<Uint8Array>} [$unknowns] Unknown fields preserved while decoding when enabled
             */
            const IndexSection = function (properties) {
                this.indices = [];
                if (properties)
                    for (let keys = $Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            };

            /**
             * IndexSection indices.
             * @member {Array.<holdfast.lance.IndexMetadata.$Properties>} indices
             * @memberof holdfast.lance.IndexSection
             * @instance
             */
            IndexSection.prototype.indices = $util.emptyArray;

            /**
             * Decodes an IndexSection message from the specified reader or buffer.
             * @function decode
             * @memberof holdfast.lance.IndexSection
             * @static
             * @param {$protobuf.Reader|Uint8Array} reader Reader or buffer to decode from
             * @param {number} [length] Message length if known beforehand
             * @returns {holdfast.lance.IndexSection & holdfast.lance.IndexSection.$Shape} IndexSection
             * @throws {Error} If the payload is not a reader or valid buffer
             * @throws {$protobuf.util.ProtocolError} If required fields are missing
             */
            IndexSection.decode = function (reader, length, _end, _depth, _target) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (_depth === $undefined)
                    _depth = 0;
                if (_depth > $Reader.recursionLimit)
                    throw $Error("max depth exceeded");
                let end, message;
                if (length === $undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw $RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = _target || new $root.holdfast.lance.IndexSection();
                while (reader.pos < end) {
                    let start = reader.pos;
                    let tag = reader.tag();
                    if (tag === _end) {
                        _end = $undefined;
                        break;
                    }
                    let wireType = tag & 7;
                    switch (tag >>>= 3) {
                    case 1: {
                            if (wireType !== 2)
                                break;
                            if (!(message.indices && message.indices.length))
                                message.indices = [];
                            message.indices.push($root.holdfast.lance.IndexMetadata.decode(reader, reader.size(), $undefined, _depth + 1));
                            continue;
                        }
                    }
                    reader.skipType(wireType, _depth, tag);
                    if (!reader.discardUnknown) {
                        $util.makeProp(message, "$unknowns", false);
                        (message.$unknowns || (message.$unknowns = [])).push(reader.raw(start, reader.pos));
                    }
                }
                if (length !== $undefined) {
                    if (reader.pos !== end)
                        throw $RangeError("index out of range");
                    reader.len = length;
                }
                if (_end !== $undefined)
                    throw $Error("missing end group");
                return message;
            };

            return IndexSection;
        })();

        return lance;
    })();

    return holdfast;
})();

export {
  $root as default
};
