
describe('two instances', () => {
  it('follow each refund once: one instance's leases leave the other nothing to do', async () => {
    const sessionId = await paidSession('USDT', '1.5');
    const created = await refund(sessionId, { kind: 'excess', destination: '0x2222222222222222222222222222222222222222' });
    await chain.pay('0x2222222222222222222222222222222222222222', 'USDT', created.amount.toFixed(), { from: 3 });
    const settings = { rpcTimeoutMs: 5_000, leaseSeconds: 30, maxBlocksPerRange: 1000, droppedAfterMinutes: 60 };
    const watcher = (id: string) =>
      createRefundWatcher(ctx(), ctx().store.refundWatch, settings, createLogger('silent'), id);
    const [a, b] = [watcher('instance-a'), watcher('instance-b')];
    await Promise.all([a.tick(), b.tick()]);
    expect((await refundOf(created.id)).status).toBe('confirmed');
    expect(await causes(created.id)).toEqual(['null→ready:created', 'ready→sent:mined', 'sent→confirmed:confirmed']);
    const leases = await ctx().store.refundWatch.lease('local', 'instance-c', new Date(), 30, 100);
    expect(leases.map((lease) => lease.refundId)).not.toContain(created.id);
  });
});
