import 'reflect-metadata';
import { Field, ID, Int, ObjectType } from 'type-graphql';
import { DateTimeScalar } from '../scalars.js';

@ObjectType('MerchantWebhookDelivery', {
  description: 'One event sent to one endpoint, as its latest attempt left it.',
})
export class MerchantWebhookDelivery {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  eventType!: string;

  @Field(() => String, { description: 'pending, succeeded or failed.' })
  status!: string;

  @Field(() => Int)
  attempts!: number;

  @Field(() => Int, { nullable: true, description: "The latest attempt's HTTP status; null when none answered." })
  httpStatus!: number | null;

  @Field(() => String, {
    nullable: true,
    description: 'Why the latest attempt failed, when the receiver did not answer.',
  })
  error!: string | null;

  @Field(() => String, { nullable: true, description: "The start of the latest attempt's response body." })
  responseExcerpt!: string | null;

  @Field(() => DateTimeScalar)
  createdAt!: Date;

  @Field(() => DateTimeScalar, { nullable: true })
  deliveredAt!: Date | null;
}

@ObjectType('MerchantWebhookEndpoint', { description: 'A webhook endpoint (never its secret) and its deliveries.' })
export class MerchantWebhookEndpoint {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  url!: string;

  @Field(() => [String], { description: 'The event types sent here; empty: every type.' })
  events!: string[];

  @Field(() => Boolean)
  enabled!: boolean;

  @Field(() => DateTimeScalar)
  createdAt!: Date;

  @Field(() => [MerchantWebhookDelivery], { description: 'The latest 20 deliveries, newest event first.' })
  deliveries!: MerchantWebhookDelivery[];
}

@ObjectType('FailedWebhooksRedelivery', { description: 'The failed deliveries queued again, due at once.' })
export class FailedWebhooksRedelivery {
  @Field(() => [ID])
  deliveryIds!: string[];
}
