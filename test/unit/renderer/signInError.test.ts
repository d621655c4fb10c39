// A sign-in error in words, with the sign-in form's field it belongs to.
import { describe, expect, it } from 'vitest';
import { signInError } from '../../../renderer/store/signInError.js';

describe('signInError', () => {
  it('says each refusal in words beside its field', () => {
    expect(signInError({ code: 262146, message: 'session is nil' })).toEqual({ message: 'Wrong email or password. Try again.', field: 'password' });
    expect(signInError({ code: 262146, message: 'session is nil' }, true)).toEqual({ message: 'The server refused this API key.', field: 'api_key' });
    expect(signInError({ code: 262151, message: 'the service could not be reached: fetch failed' })).toEqual({
      message: 'The server cannot be reached. Check its address and your connection.', field: 'server',
    });
    expect(signInError({ code: 262149, message: 'Route POST:/v1/auth not found' })).toEqual({ message: 'No Ferry server answers at this address. Check it.', field: 'server' });
    expect(signInError({ code: 262151, message: 'the service answered 429: too many wrong attempts: wait 30 s before trying again' })).toEqual({
      message: 'Too many wrong attempts: wait 30 s before trying again.', field: 'password',
    });
    expect(signInError({ code: 262145, message: '"bob@" is not an email address.', field: 'email' })).toEqual({ message: '"bob@" is not an email address.', field: 'email' });
  });
});
