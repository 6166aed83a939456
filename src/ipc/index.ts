export { Channel, type ChannelOptions } from './channel.js';
export { IpcError, type IpcErrorCode } from './errors.js';
export { DEFAULT_MAX_FRAME_BYTES, encodeFrame, FrameDecoder } from './frame.js';
export * from './tool-host-messages.js';
